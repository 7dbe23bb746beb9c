import { Schema } from "effect"
import { JsonObject, Timestamp } from "../domain/wireTypes.ts"

/** Where a single call stands, as `GET /api/v2/calls/{id}` tells it. */
export const CallStatus = Schema.Literal("scheduled", "dialing", "in_progress", "completed", "failed")
export type CallStatus = typeof CallStatus.Type

/** One outbound call started by the API (not a campaign's): its request, its run and how it ended. */
export const Call = Schema.Struct({
  id: Schema.Int,
  agent_id: Schema.Int,
  status: CallStatus,
  phone_number: Schema.String,
  caller_number: Schema.NullOr(Schema.String),
  telephony_configuration_id: Schema.NullOr(Schema.Int),
  use_draft: Schema.Boolean,
  variables: JsonObject,
  scheduled_at: Schema.NullOr(Timestamp),
  run_id: Schema.NullOr(Schema.Int).annotations({
    description: "The call's run (conversation): its transcript, usage and results once it ends"
  }),
  run_name: Schema.NullOr(Schema.String),
  outcome: Schema.NullOr(Schema.String).annotations({
    description: "How the carrier reported the call's end: completed, voicemail, busy, no-answer, failed, canceled"
  }),
  end_reason: Schema.NullOr(Schema.String),
  duration_seconds: Schema.Int,
  error: Schema.NullOr(Schema.String),
  idempotency_key: Schema.NullOr(Schema.String),
  created_at: Timestamp
}).annotations({ identifier: "V2_Call" })
export type Call = typeof Call.Type

/** What a call's status is read from: its own state and, once dialled, its attempt's. */
export interface CallProgressFacts {
  readonly state: "scheduled" | "placing" | "placed" | "not_placed"
  readonly answered: boolean
  readonly outcome: string | null
}

/** A call a carrier ended as completed or as a machine's answer reached someone; anything else failed. */
export const callStatusOf = (facts: CallProgressFacts): CallStatus => {
  if (facts.state === "scheduled") return "scheduled"
  if (facts.state === "not_placed") return "failed"
  if (facts.outcome !== null) {
    return facts.outcome === "completed" || facts.outcome === "voicemail"
      ? "completed"
      : "failed"
  }
  return facts.answered ? "in_progress" : "dialing"
}

/**
 * A request's fingerprint for its idempotency key: the same key with the same request answers the
 * call it made; with another request it is refused. Keys of objects are sorted, so the order a
 * client writes them in does not matter.
 */
export const canonicalJson = (value: unknown): string => {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, item]) => item !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    return `{${entries.map(([key, item]) => `${JSON.stringify(key)}:${canonicalJson(item)}`).join(",")}}`
  }
  return JSON.stringify(value)
}
