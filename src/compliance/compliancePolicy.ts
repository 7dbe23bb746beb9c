import { Schema } from "effect"
import { CallingHours, defaultCallingHours } from "./callingHours.ts"

/** An organization's calling rules (README "Compliance"); a campaign may bring its own calling hours. */
export const CompliancePolicy = Schema.Struct({
  calling_hours: CallingHours
}).annotations({ identifier: "CompliancePolicy" })
export type CompliancePolicy = typeof CompliancePolicy.Type

export const defaultCompliancePolicy: CompliancePolicy = { calling_hours: defaultCallingHours }
