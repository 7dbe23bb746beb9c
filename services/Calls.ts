import { Context, type Effect } from "effect"
import type { Call } from "../src/calls/callRecord.ts"
import type {
  Conflict,
  Forbidden,
  NotFound,
  TooManyRequests,
  UpstreamFailed,
  ValidationFailed
} from "../src/domain/errors.ts"
import type { TelephonyConfigId, WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"

/**
 * The agent a call runs: by its id (v2), by its public UUID, or (the Dograh-compatible routes)
 * by the `trigger_path` of one of its trigger nodes, else its UUID.
 */
export type CallAgent =
  | { readonly _tag: "ById"; readonly id: WorkflowId }
  | { readonly _tag: "ByUuid"; readonly uuid: string }
  | { readonly _tag: "ByTrigger"; readonly path: string }

export interface CallRequest {
  readonly agent: CallAgent
  /** Run the agent's latest draft (falls back to the published version when it has none). */
  readonly useDraft: boolean
  readonly phoneNumber: string
  /** The run's `initial_context`: template variables for the agent's prompts. */
  readonly variables: Readonly<Record<string, unknown>>
  /** The organization's default outbound configuration when null. */
  readonly telephonyConfigurationId: TelephonyConfigId | null
  /** A phone number of that configuration to call from; its default caller id when null. */
  readonly fromPhoneNumberId: number | null
  /** Epoch milliseconds; placed as soon as a slot is free from then on. Null: now. */
  readonly scheduledAt: number | null
  readonly idempotencyKey: string | null
  /** Who asked: `api` (v2) or `public_agent` (v1 routes), recorded on the run's context. */
  readonly source: "api" | "public_agent"
}

export type CallFailure = NotFound | ValidationFailed | Conflict | TooManyRequests | Forbidden | UpstreamFailed

export interface PlacedCall {
  readonly call: Call
  /** False when an earlier request with the same idempotency key made this call. */
  readonly created: boolean
}

/**
 * Single outbound calls. A call is placed like a campaign's, on the same path: its attempt counts
 * against the organization's live-call limit (campaigns' claims count it, and it counts theirs),
 * the carrier's callbacks and media reach it as any other call, and its run is in usage.
 */
export interface CallsShape {
  /**
   * Places the call now (the carrier has been asked when this answers) or schedules it. A call
   * due now when the organization has no free slot is refused with TooManyRequests.
   */
  readonly place: (principal: Principal, request: CallRequest) => Effect.Effect<PlacedCall, CallFailure>
  readonly get: (principal: Principal, id: number) => Effect.Effect<Call, NotFound>
}

export class Calls extends Context.Tag("talkgraph/Calls")<Calls, CallsShape>() {}
