import { Schema } from "effect"
import { Timestamp } from "../domain/wireTypes.ts"

/** How a number came onto the list. */
export const DoNotCallSource = Schema.Literal("api", "csv_import", "disposition", "agent_tool")
export type DoNotCallSource = typeof DoNotCallSource.Type

/** One number an organization must never dial, in E.164 form. */
export const DoNotCallEntry = Schema.Struct({
  phone_number: Schema.String,
  reason: Schema.NullOr(Schema.String),
  source: DoNotCallSource,
  created_at: Timestamp
}).annotations({ identifier: "DoNotCallEntry" })
export type DoNotCallEntry = typeof DoNotCallEntry.Type

/** Why the dialer left a contact uncalled (campaign report and progress). */
export const SkipReason = Schema.Literal("dnc", "outside_local_hours", "frequency_cap")
export type SkipReason = typeof SkipReason.Type
