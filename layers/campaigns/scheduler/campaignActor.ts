import { Clock, Effect, FiberSet, Queue } from "effect"
import { evaluateBreaker, isBreakerFailure } from "../../../src/campaign/circuitBreaker.ts"
import { logFrom, recordDispatch, waitBeforeDispatch } from "../../../src/campaign/dispatchRate.ts"
import { isWithinSchedule, nextWindowStart } from "../../../src/campaign/scheduleWindow.ts"
import { answerUrl, mediaStreamUrl, mediaToken, statusCallbackUrl } from "../../../src/telephony/mediaToken.ts"
import type { CarrierAccount, CarrierAdapter, TelephonyShape } from "../../../services/Telephony.ts"
import type { TelephonyConfigsShape } from "../../../services/TelephonyConfigs.ts"
import { carrierAccount } from "../../telephony/carrierAccounts.ts"
import type { ActorCampaign, ClaimedAttempt, DialerRows, DialPlan } from "./dialerRows.ts"
import type { OutcomeRows } from "./outcomeRows.ts"
import type { SchedulerSettingsShape } from "./schedulerSettings.ts"

export interface ActorDeps {
  readonly owner: string
  readonly publicUrl: string
  readonly settings: SchedulerSettingsShape
  readonly rows: DialerRows
  readonly outcomes: OutcomeRows
  readonly telephony: TelephonyShape
  readonly configs: TelephonyConfigsShape
  /** Signs the media-stream link for providers that take it when dialling. */
  readonly sign: (purpose: string, message: string) => string
  /** Carrier requests outlive a paused actor: a call being placed is not cut off halfway. */
  readonly placements: FiberSet.FiberSet<unknown, unknown>
}

/** An organization-wide limit is freed by other campaigns' calls, which do not wake this actor. */
const ORG_FULL_RECHECK_MS = 250

/**
 * The carrier sees our requests a little later than we send them, and not all equally late; this
 * much extra spacing keeps the rate exact where it is measured, at the carrier (at 100/s it costs
 * about 2.5%).
 */
const SEND_JITTER_MARGIN_MS = 25

/** Why an actor stopped: nothing for it to do here, or its settings changed and it starts afresh. */
export type ActorExit = "stopped" | "reload"

/** Places one claimed attempt; a refusal ends the attempt as failed (a breaker failure). */
const place = (deps: ActorDeps, campaign: ActorCampaign, account: CarrierAccount, adapter: CarrierAdapter, plan: DialPlan, attempt: ClaimedAttempt) =>
  adapter.placeCall(account, {
    to: attempt.phoneNumber,
    from: plan.callerNumber,
    answerUrl: answerUrl(deps.publicUrl, account.provider, attempt.runId),
    statusCallbackUrl: statusCallbackUrl(deps.publicUrl, account.provider, attempt.runId),
    timeLimitSeconds: deps.settings.maxCallSeconds,
    mediaStreamUrl: mediaStreamUrl(
      deps.publicUrl,
      account.provider,
      attempt.runId,
      mediaToken(deps.sign, attempt.runId, Math.floor(Date.now() / 1000) + deps.settings.mediaTokenSeconds + deps.settings.maxCallSeconds)
    )
  }).pipe(
    Effect.flatMap(({ providerCallId }) => deps.rows.recordPlaced(attempt.attemptId, providerCallId)),
    Effect.catchTag("CallNotPlaced", (refused) =>
      Effect.gen(function* () {
        yield* Effect.logWarning("call not placed", { campaign_id: campaign.id, run_id: attempt.runId, reason: refused.message })
        yield* deps.outcomes.applyOutcome({
          attemptId: attempt.attemptId,
          outcome: "failed",
          endReason: refused.permanent ? "not_placed_refused" : "not_placed_unreachable",
          durationSeconds: 0,
          providerCallId: null,
          now: yield* Clock.currentTimeMillis
        })
      })),
    Effect.withSpan("CampaignDialer.attempt", {
      attributes: {
        campaign_id: campaign.id,
        run_id: attempt.runId,
        contact_id: attempt.contactId,
        attempt_number: attempt.attemptNumber,
        provider: account.provider
      }
    }),
    Effect.catchAllCause((cause) => Effect.logError("placing a call failed", cause))
  )

/**
 * One campaign's dialer, while this process holds its lease: dials due contacts as fast as the
 * rate, the campaign's and the organization's live-call limits, the calling windows and the
 * breaker allow, and no faster. Everything it knows is rebuilt from the database when it starts,
 * so a restart (after a crash, or in another process) continues exactly where the last one was.
 */
export const runCampaignActor = (deps: ActorDeps, campaignId: number, wakes: Queue.Dequeue<void>) =>
  Effect.gen(function* () {
    const campaign = yield* deps.rows.loadCampaign(campaignId)
    if (!campaign || campaign.state !== "running" || campaign.lease_owner !== deps.owner) return "stopped" as ActorExit
    yield* Effect.annotateCurrentSpan({ campaign_id: campaign.id, organization_id: campaign.organization_id })

    const outbound = yield* deps.configs.outbound(campaign.organization_id, campaign.telephony_configuration_id).pipe(Effect.either)
    if (outbound._tag === "Left") {
      yield* deps.outcomes.pauseWithReason(campaign.id, yield* Clock.currentTimeMillis, "telephony_unavailable", outbound.left.message)
      return "stopped" as ActorExit
    }
    const account = carrierAccount(outbound.right)
    const adapter = deps.telephony.adapter(account.provider)
    const definition = yield* deps.rows.dialPlanDefinition(campaign.workflow_id)
    const plan: DialPlan = {
      provider: account.provider,
      telephonyConfigurationId: account.configurationId,
      callerNumber: outbound.right.caller_ids[0]!,
      definitionId: definition?.id ?? null,
      versionNumber: definition?.version_number ?? null
    }
    const rate = campaign.rate_limit_per_second
    let log = logFrom(rate, yield* deps.rows.recentDispatches(campaign.id, rate))
    const callMillis = (deps.settings.maxCallSeconds + deps.settings.deadlineGraceSeconds) * 1000

    /** Sleeps up to `ms`, or less when something about this campaign changed. */
    const rest = (ms: number) => Queue.take(wakes).pipe(Effect.timeout(Math.max(1, ms)), Effect.ignore)

    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (!isWithinSchedule(campaign.schedule_config, now)) {
        const opens = nextWindowStart(campaign.schedule_config, now)
        // Sleeping in bounded steps keeps the lease check (in the claim) and wake-ups responsive.
        yield* rest(opens === null ? deps.settings.pollMillis * 60 : Math.min(opens - now, 60_000))
        continue
      }
      // Before every call: an outcome that arrived a moment ago must stop the very next dial.
      if (campaign.circuit_breaker.enabled) {
        const window = campaign.circuit_breaker.window_seconds * 1000
        const ended = yield* deps.outcomes.breakerOutcomes(campaign.id, now - window, campaign.breaker_reset_at)
        const outcomes = ended.map((row) => ({ at: row.ended_at.getTime(), failed: isBreakerFailure(row.outcome) }))
        const verdict = evaluateBreaker(outcomes, campaign.circuit_breaker, now)
        if (verdict.tripped) {
          const failures = ended.filter((row) => isBreakerFailure(row.outcome)).slice(-20)
          yield* deps.outcomes.tripBreaker(
            campaign.id,
            now,
            `Paused: ${verdict.failures} of the last ${verdict.calls} calls failed (threshold ${campaign.circuit_breaker.failure_threshold})`,
            {
              calls_in_window: verdict.calls,
              failures_in_window: verdict.failures,
              failure_ratio: verdict.failureRatio,
              recent_failures: failures.map((row) => ({ run_id: row.run_id, outcome: row.outcome, reason: row.end_reason, at: row.ended_at }))
            }
          )
          return "stopped" as ActorExit
        }
      }
      const wait = waitBeforeDispatch(log, now - SEND_JITTER_MARGIN_MS)
      if (wait > 0) {
        yield* Effect.sleep(wait)
        continue
      }
      const claim = yield* deps.rows.claimNext({
        campaign,
        owner: deps.owner,
        now,
        deadlineAt: now + callMillis,
        orgLimit: deps.settings.orgMaxConcurrentCalls,
        plan
      })
      switch (claim._tag) {
        case "Lost":
          return "stopped" as ActorExit
        case "Changed":
          return "reload" as ActorExit
        case "Full":
          yield* rest(claim.limit === "organization" ? ORG_FULL_RECHECK_MS : deps.settings.pollMillis)
          break
        case "NoneDue": {
          if (claim.nextDueAt === null && claim.dialing === 0) {
            const completed = yield* deps.outcomes.complete(campaign.id, now)
            if (completed.length > 0) {
              yield* Effect.logInfo("campaign completed", { campaign_id: campaign.id })
              return "stopped" as ActorExit
            }
          }
          const due = claim.nextDueAt === null ? deps.settings.pollMillis : claim.nextDueAt.getTime() - now
          yield* rest(Math.min(Math.max(due, 1), deps.settings.pollMillis))
          break
        }
        case "Claimed":
          log = recordDispatch(log, yield* Clock.currentTimeMillis)
          yield* FiberSet.run(deps.placements, place(deps, campaign, account, adapter, plan, claim.attempt))
      }
    }
  }).pipe(Effect.withSpan("CampaignDialer.actor", { attributes: { campaign_id: campaignId } }))
