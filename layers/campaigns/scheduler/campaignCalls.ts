import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import { CampaignCalls } from "../../../services/CampaignCalls.ts"
import { CampaignDoorbell } from "../../../services/CampaignDoorbell.ts"
import { CarrierAccounts } from "../../../services/CarrierAccounts.ts"
import { DialerRepo } from "../../../services/DialerRepo.ts"
import { PublicUrl } from "../../../services/PublicUrl.ts"
import { SecretBox } from "../../../services/SecretBox.ts"
import { type CallStatus, type Provider, Telephony, type WebhookRequest } from "../../../services/Telephony.ts"
import type { CircuitBreakerConfig, ScheduleConfig } from "../../../src/campaign/campaignSettings.ts"
import { evaluateBreaker, isBreakerFailure } from "../../../src/campaign/circuitBreaker.ts"
import { isWithinSchedule, nextWindowStart } from "../../../src/campaign/scheduleWindow.ts"
import { Forbidden, NotFound } from "../../../src/domain/errors.ts"
import { mediaStreamUrl, mediaToken } from "../../../src/telephony/mediaToken.ts"
import { makeAttemptRefs } from "./attemptRefs.ts"
import { SchedulerSettings } from "./schedulerSettings.ts"

const RATE_WINDOW_MS = 10_000

const INVALID_SIGNATURE = "Invalid webhook signature"

export const CampaignCallsLive = Layer.effect(
  CampaignCalls,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const telephony = yield* Telephony
    const secrets = yield* SecretBox
    const publicUrl = yield* PublicUrl
    const doorbell = yield* CampaignDoorbell
    const settings = yield* SchedulerSettings
    const accounts = yield* CarrierAccounts
    const repo = yield* DialerRepo
    const attempts = yield* makeAttemptRefs

    /**
     * The attempt behind a run, checked with the signature of the configuration that placed it. A
     * run that has no call of this provider is refused exactly as a bad signature is: whoever
     * cannot sign must not learn which run ids exist.
     */
    const verified = (provider: Provider, runId: number, request: WebhookRequest) =>
      Effect.gen(function*() {
        const attempt = yield* attempts.of(runId)
        const account = attempt && attempt.provider === provider && attempt.telephony_configuration_id !== null
          ? yield* accounts.forConfiguration(attempt.organization_id, attempt.telephony_configuration_id)
          : Option.none()
        const adapter = telephony.adapter(provider)
        if (!attempt || Option.isNone(account) || !adapter.verifyWebhook(account.value, request)) {
          yield* Effect.logWarning("telephony webhook refused: unknown call or bad signature", {
            provider,
            run_id: runId
          })
          return yield* new Forbidden({ message: INVALID_SIGNATURE })
        }
        return { attempt, adapter }
      })

    /**
     * A signed callback must be about the call placed for this run's attempt, not another call of
     * the same account pointed at this run's URL (or a late callback of a call from before a
     * restored backup reused the run id).
     */
    const ofPlacedCall = (provider: Provider, runId: number, status: Option.Option<CallStatus>) =>
      Effect.gen(function*() {
        if (
          Option.isSome(status) &&
          (yield* attempts.callOf(runId, status.value.providerCallId)) === status.value.providerCallId
        ) {
          return status.value
        }
        yield* Effect.logWarning("telephony webhook refused: not the call placed for this run", {
          provider,
          run_id: runId
        })
        return yield* new Forbidden({ message: "This callback is not about the call placed for this run" })
      })

    const statusCallback = Effect.fn("CampaignCalls.statusCallback")(
      function*(provider: Provider, runId: number, request: WebhookRequest) {
        yield* Effect.annotateCurrentSpan({ run_id: runId, provider })
        const { attempt, adapter } = yield* verified(provider, runId, request)
        const status = adapter.parseStatusCallback(request)
        if (Option.isNone(status)) return "ignored" as const
        const { outcome, providerCallId, durationSeconds, answered, liveCallId, answeredBy } = yield* ofPlacedCall(
          provider,
          runId,
          status
        )
        const now = yield* Clock.currentTimeMillis
        // Queued or ringing adds nothing more; the answer, the live call's id and detection's verdict are kept.
        if (outcome === null) {
          if (answered || liveCallId !== undefined || answeredBy !== undefined) {
            yield* repo.recordProgress(attempt.id, providerCallId, {
              answered: answered === true,
              liveCallId,
              answeredBy
            }, now)
          }
          return "ignored" as const
        }
        const applied = yield* repo.applyOutcome({
          attemptId: attempt.id,
          outcome,
          answeredBy: answeredBy ?? null,
          endReason: `telephony_${outcome}`,
          durationSeconds,
          providerCallId,
          now
        })
        yield* attempts.forget(runId)
        if (!applied) return "ignored" as const
        yield* doorbell.slotFreed(applied.campaignId)
        return "applied" as const
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const answer = Effect.fn("CampaignCalls.answer")(
      function*(provider: Provider, runId: number, request: WebhookRequest) {
        yield* Effect.annotateCurrentSpan({ run_id: runId, provider })
        const { attempt, adapter } = yield* verified(provider, runId, request)
        const now = yield* Clock.currentTimeMillis
        // The answer request names its call like any callback; one that names none connects nothing.
        const { providerCallId, liveCallId, answeredBy } = yield* ofPlacedCall(
          provider,
          runId,
          adapter.parseStatusCallback(request)
        )
        yield* repo.recordProgress(attempt.id, providerCallId, { answered: true, liveCallId, answeredBy }, now)
        const expires = Math.floor(now / 1000) + settings.mediaTokenSeconds
        const token = mediaToken(secrets.sign, runId, expires)
        return adapter.answerMarkup(mediaStreamUrl(publicUrl, provider, runId, token))
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const dispatchStatus = Effect.fn("CampaignCalls.dispatchStatus")(function*(campaignId: number) {
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
      return {
        rate_achieved_per_second: Math.round((counts!.recent / (RATE_WINDOW_MS / 1000)) * 100) / 100,
        rate_limit_per_second: campaign.rate_limit_per_second,
        live_calls: counts!.live,
        max_concurrency: campaign.max_concurrency,
        breaker: {
          enabled: breakerConfig.enabled,
          state: tripped ? "tripped" as const : "closed" as const,
          calls_in_window: verdict.calls,
          failures_in_window: verdict.failures,
          failure_ratio: Math.round(verdict.failureRatio * 1000) / 1000
        },
        within_schedule: within,
        next_window_at: opens === null ? null : new Date(opens),
        dialer: campaign.dialer
      }
    }, Effect.catchTag("SqlError", Effect.die))

    const mediaRefused = Effect.fn("CampaignCalls.mediaRefused")(function*(runId: number, reason: string) {
      const now = yield* Clock.currentTimeMillis
      const attempt = yield* attempts.of(runId)
      if (!attempt) {
        yield* sql`
          UPDATE runs SET state = 'failed', end_reason = 'media_refused', error = ${reason}, ended_at = ${new Date(
          now
        )}, updated_at = ${new Date(now)}
          WHERE id = ${runId} AND ended_at IS NULL`
        return
      }
      const applied = yield* repo.applyOutcome({
        attemptId: attempt.id,
        outcome: "failed",
        endReason: "media_refused",
        error: reason,
        durationSeconds: 0,
        providerCallId: null,
        now
      })
      yield* attempts.forget(runId)
      if (applied) yield* doorbell.slotFreed(applied.campaignId)
    }, Effect.orDie)

    return CampaignCalls.of({ statusCallback, answer, dispatchStatus, mediaRefused })
  })
)
