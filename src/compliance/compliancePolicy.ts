import { Schema } from "effect"
import { CallingHours, defaultCallingHours } from "./callingHours.ts"

/** An organization's calling rules (README "Compliance"); a campaign may bring its own calling hours. */
export const FrequencyCaps = Schema.Struct({
  per_day: Schema.NullOr(Schema.Int.pipe(Schema.between(1, 1000))).annotations({
    description: "At most this many calls to one number in any 24 hours (null: no cap)"
  }),
  per_7_days: Schema.NullOr(Schema.Int.pipe(Schema.between(1, 1000))).annotations({
    description: "At most this many calls to one number in any 7 days (null: no cap)"
  })
}).annotations({ identifier: "FrequencyCaps" })
export type FrequencyCaps = typeof FrequencyCaps.Type

export const noFrequencyCaps: FrequencyCaps = { per_day: null, per_7_days: null }

export const CompliancePolicy = Schema.Struct({
  calling_hours: CallingHours,
  frequency_caps: Schema.optionalWith(FrequencyCaps, { default: () => noFrequencyCaps }).annotations({
    description: "Calls to one number counted across every campaign and single call of the organization"
  })
}).annotations({ identifier: "CompliancePolicy" })
export type CompliancePolicy = typeof CompliancePolicy.Type

export const defaultCompliancePolicy: CompliancePolicy = {
  calling_hours: defaultCallingHours,
  frequency_caps: noFrequencyCaps
}
