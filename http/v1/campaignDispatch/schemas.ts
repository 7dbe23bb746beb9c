import { Schema } from "effect"
import { Timestamp } from "../../../src/domain/wireTypes.ts"

/** The dialer's live view of a campaign, part of `GET /api/v1/campaign/{id}/progress`. */
export const DispatchStatusResponse = Schema.Struct({
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
  next_window_at: Schema.NullOr(Timestamp),
  dialer: Schema.NullOr(Schema.String)
}).annotations({ identifier: "CampaignDispatchStatus" })
