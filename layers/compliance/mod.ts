export { CompliancePoliciesLive } from "./compliancePolicies.ts"
export { DoNotCallLive } from "./doNotCall.ts"
