import { Schema } from "effect"
import { CampaignId } from "../domain/ids.ts"
import { Timestamp } from "../domain/wireTypes.ts"
import { CampaignState } from "./campaignState.ts"
import { CampaignImport } from "./contactImport.ts"

/** What the dialer is doing for a campaign right now, derived from the database (any process can answer). */
export const DispatchStatus = Schema.Struct({
  /** Attempts placed in the last ten seconds, per second. */
  rate_achieved_per_second: Schema.Number,
  rate_limit_per_second: Schema.Int,
  live_calls: Schema.Int,
  max_concurrency: Schema.NullOr(Schema.Int),
  breaker: Schema.Struct({
    enabled: Schema.Boolean,
    state: Schema.Literal("closed", "tripped"),
    calls_in_window: Schema.Int,
    failures_in_window: Schema.Int,
    failure_ratio: Schema.Number
  }),
  within_schedule: Schema.Boolean,
  /** The start of the next calling window when outside one; null inside one or without a schedule. */
  next_window_at: Schema.NullOr(Timestamp),
  /** The process dialing this campaign, if any. */
  dialer: Schema.NullOr(Schema.String)
}).annotations({ identifier: "CampaignDispatchStatus" })
export type DispatchStatus = typeof DispatchStatus.Type

/** A campaign's progress (`GET /api/v1/campaign/{id}/progress`): its contacts by state and the dialer's live view. */
export const CampaignProgress = Schema.Struct({
  campaign_id: CampaignId,
  state: CampaignState,
  total_rows: Schema.Int,
  processed_rows: Schema.Int,
  failed_rows: Schema.Int,
  executed_count: Schema.Int,
  total_queued_count: Schema.Int,
  pending: Schema.Int,
  dialing: Schema.Int,
  completed: Schema.Int,
  failed: Schema.Int,
  cancelled: Schema.Int,
  /** Contacts the calling rules keep from being dialled (README "Compliance"). */
  skipped: Schema.Int,
  /** Pending contacts outside their local calling hours: called once the hours open. */
  waiting_for_local_hours: Schema.Int,
  /** Pending contacts whose number was called as often as the organization's caps allow, for now. */
  waiting_for_frequency_cap: Schema.Int,
  skipped_reasons: Schema.Struct({
    dnc: Schema.Int,
    outside_local_hours: Schema.Int,
    frequency_cap: Schema.Int
  }),
  /** Attempts with a call in flight, counted from the attempts themselves. */
  live_calls: Schema.Int,
  next_attempt_at: Schema.NullOr(Timestamp),
  started_at: Schema.NullOr(Timestamp),
  completed_at: Schema.NullOr(Timestamp),
  import: CampaignImport,
  dispatch: DispatchStatus
}).annotations({ identifier: "CampaignProgressResponse" })
export type CampaignProgress = typeof CampaignProgress.Type
