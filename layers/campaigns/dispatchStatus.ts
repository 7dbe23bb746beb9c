import { SqlClient } from "@effect/sql"
import { Clock, Effect } from "effect"
import type { DispatchStatus } from "../../services/CampaignCalls.ts"
import { DialerRepo } from "../../services/DialerRepo.ts"
import type { CircuitBreakerConfig, ScheduleConfig } from "../../src/campaigns/campaignSettings.ts"
import { evaluateBreaker, isBreakerFailure } from "../../src/campaigns/circuitBreaker.ts"
import { isWithinSchedule, nextWindowStart } from "../../src/campaigns/scheduleWindow.ts"
import { NotFound } from "../../src/domain/errors.ts"
import type { CampaignId } from "../../src/domain/ids.ts"

const RATE_WINDOW_MS = 10_000

/**
 * What the dialer is doing for a campaign right now (rate achieved, breaker, calling window, the
 * process dialing it), derived from the database so that any process can answer.
 */
export const makeDispatchStatus = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const repo = yield* DialerRepo

  return (campaignId: CampaignId) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const [campaign] = yield* sql<{
        rate_limit_per_second: number
        max_concurrency: number | null
        circuit_breaker: CircuitBreakerConfig
        schedule_config: ScheduleConfig | null
        breaker_reset_at: Date | null
        state: string
        dialer: string | null
        last_lifecycle: string | null
      }>`
        SELECT rate_limit_per_second, max_concurrency, circuit_breaker, schedule_config, breaker_reset_at, state,
               CASE WHEN lease_expires_at > now() THEN lease_owner END AS dialer,
               (SELECT entry->>'event' FROM jsonb_array_elements(logs) WITH ORDINALITY AS l(entry, position)
                WHERE entry->>'event' IN ('circuit_breaker_tripped', 'campaign_paused', 'campaign_resumed', 'campaign_started')
                ORDER BY position DESC LIMIT 1) AS last_lifecycle
        FROM campaigns WHERE id = ${campaignId}`
      if (!campaign) return yield* new NotFound({ resource: "Campaign", id: campaignId })
      const [counts] = yield* sql<{ live: number; recent: number }>`
        SELECT count(*) FILTER (WHERE ended_at IS NULL)::int AS live,
               count(*) FILTER (WHERE created_at > ${new Date(now - RATE_WINDOW_MS)})::int AS recent
        FROM campaign_attempts WHERE campaign_id = ${campaignId}`
      const breakerConfig = campaign.circuit_breaker
      const ended = yield* repo.breakerOutcomes(
        campaignId,
        now - breakerConfig.window_seconds * 1000,
        campaign.breaker_reset_at
      )
      const verdict = evaluateBreaker(
        ended.map((row) => ({ at: row.ended_at.getTime(), failed: isBreakerFailure(row.outcome) })),
        breakerConfig,
        now
      )
      // Tripped until resumed: the breaker's last word is the latest lifecycle event of a paused campaign.
      const tripped = campaign.state === "paused" && campaign.last_lifecycle === "circuit_breaker_tripped"
      const within = isWithinSchedule(campaign.schedule_config, now)
      const opens = within ? null : nextWindowStart(campaign.schedule_config, now)
      const status: DispatchStatus = {
        rate_achieved_per_second: Math.round((counts!.recent / (RATE_WINDOW_MS / 1000)) * 100) / 100,
        rate_limit_per_second: campaign.rate_limit_per_second,
        live_calls: counts!.live,
        max_concurrency: campaign.max_concurrency,
        breaker: {
          enabled: breakerConfig.enabled,
          state: tripped ? "tripped" : "closed",
          calls_in_window: verdict.calls,
          failures_in_window: verdict.failures,
          failure_ratio: Math.round(verdict.failureRatio * 1000) / 1000
        },
        within_schedule: within,
        next_window_at: opens === null ? null : new Date(opens),
        dialer: campaign.dialer
      }
      return status
    })
})
