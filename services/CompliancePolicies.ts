import { Context, type Effect } from "effect"
import type { CompliancePolicy } from "../src/compliance/compliancePolicy.ts"
import type { Principal } from "../src/domain/principal.ts"

/** The organization's calling rules; the dialer's claim reads them at every claim. */
export interface CompliancePoliciesShape {
  readonly get: (principal: Principal) => Effect.Effect<CompliancePolicy>
  readonly put: (principal: Principal, policy: CompliancePolicy) => Effect.Effect<CompliancePolicy>
}

export class CompliancePolicies
  extends Context.Tag("talkgraph/CompliancePolicies")<CompliancePolicies, CompliancePoliciesShape>()
{}
