import { Schema } from "effect"
import { JsonValue, TimestampText } from "../domain/wireTypes.ts"

/** One entry of a campaign's `logs` (CampaignLogEntryResponse). */
export const CampaignLogEntry = Schema.Struct({
  ts: TimestampText,
  level: Schema.Literal("info", "warning", "error"),
  event: Schema.String,
  message: Schema.String,
  details: Schema.optional(JsonValue)
}).annotations({ identifier: "CampaignLogEntryResponse" })
export type CampaignLogEntry = typeof CampaignLogEntry.Type

export const logEntry = (
  now: Date,
  level: CampaignLogEntry["level"],
  event: string,
  message: string,
  details?: unknown
): CampaignLogEntry => ({ ts: now.toISOString(), level, event, message, ...(details === undefined ? {} : { details }) })
