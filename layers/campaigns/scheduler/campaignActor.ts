import { Clock, Effect, FiberSet, Queue, Ref } from "effect"
import type { ActorCampaign, Claim, ClaimedAttempt, DialerRepoShape, DialPlan } from "../../../services/DialerRepo.ts"
import type { CarrierAccount, CarrierAdapter, TelephonyShape } from "../../../services/Telephony.ts"
import type { TelephonyConfigsShape } from "../../../services/TelephonyConfigs.ts"
import { type BreakerVerdict, isBreakerFailure } from "../../../src/campaigns/circuitBreaker.ts"
import {
  available,
  type BatchPlan,
  claimTook,
  type DispatchPacer,
  handedOut,
  nextBatch,
  pacerFrom,
  readyAt,
  sent
} from "../../../src/campaigns/dispatchRate.ts"
import { retryAfterPlacementFailure } from "../../../src/campaigns/retryPolicy.ts"
import { isWithinSchedule, nextWindowStart } from "../../../src/campaigns/scheduleWindow.ts"
import type { CampaignId } from "../../../src/domain/ids.ts"
import { answerUrl, mediaStreamUrl, mediaToken, statusCallbackUrl } from "../../../src/telephony/mediaToken.ts"
import { carrierAccount } from "../../telephony/carrierAccounts.ts"
import type { AttemptRef } from "./attemptRefs.ts"
import type { ClaimTurns } from "./claimTurns.ts"
import type { PlacedCalls } from "./placedCalls.ts"
import type { SchedulerSettingsShape } from "./schedulerSettings.ts"

export interface ActorDeps {
  readonly owner: string
  readonly publicUrl: string
  readonly settings: SchedulerSettingsShape
  readonly repo: DialerRepoShape
  readonly placed: PlacedCalls
  readonly telephony: TelephonyShape
  readonly configs: TelephonyConfigsShape
  /** Signs the media-stream link for providers that take it when dialling. */
  readonly sign: (purpose: string, message: string) => string
  /** Carrier requests outlive a paused actor: a call being placed is not cut off halfway. */
  readonly placements: FiberSet.FiberSet<unknown, unknown>
  /** Bounds the carrier requests in flight in this process, across its campaigns (a slow carrier). */
  readonly carrierRequests: Effect.Semaphore
  /** One claim at a time per organization in this process, first come first served. */
  readonly claimTurns: ClaimTurns
  /** Waits while this process is too busy to answer the calls it already placed. */
  readonly saturation: { readonly awaitHeadroom: Effect.Effect<void> }
}

/** An organization-wide limit is freed by other campaigns' calls, which do not wake this actor. */
const ORG_FULL_RECHECK_MS = 250

/** The failures a breaker trip logs. */
const TRIP_FAILURES_LOGGED = 20

/** Why an actor stopped: nothing for it to do here, or its settings changed and it starts afresh. */
type ActorExit = "stopped" | "reload"

/** Where a placement tells the campaign's pacer that the carrier has seen its call. */
type SendLog = Ref.Ref<DispatchPacer>

/**
 * Places one claimed attempt; a refusal ends the attempt as failed (a breaker failure). When the
 * request is over (answered, refused or failed) the carrier has seen the call if it ever will,
 * and the rate log learns so; until then the call counts as being sent.
 */
const place = (
  deps: ActorDeps,
  campaign: ActorCampaign,
  account: CarrierAccount,
  adapter: CarrierAdapter,
  plan: DialPlan,
  attempt: ClaimedAttempt,
  sends: SendLog
) => {
  const ref: AttemptRef = {
    id: attempt.attemptId,
    organization_id: campaign.organization_id,
    telephony_configuration_id: plan.telephonyConfigurationId,
    provider: plan.provider
  }
  return Effect.zipRight(
    deps.placed.dialing(attempt.runId, ref),
    Effect.flatMap(Clock.currentTimeMillis, (now) =>
      adapter.placeCall(account, {
        to: attempt.phoneNumber,
        from: attempt.callerNumber,
        answerUrl: answerUrl(deps.publicUrl, account.provider, attempt.runId),
        statusCallbackUrl: statusCallbackUrl(deps.publicUrl, account.provider, attempt.runId),
        timeLimitSeconds: deps.settings.maxCallSeconds,
        // The link outlives the longest call the carrier may connect it to.
        mediaStreamUrl: mediaStreamUrl(
          deps.publicUrl,
          account.provider,
          attempt.runId,
          mediaToken(
            deps.sign,
            attempt.runId,
            Math.floor(now / 1000) + deps.settings.mediaTokenSeconds + deps.settings.maxCallSeconds
          )
        )
      })).pipe(
        Effect.ensuring(
          Effect.flatMap(Clock.currentTimeMillis, (now) => Ref.update(sends, (pacer) => sent(pacer, now)))
        ),
        deps.carrierRequests.withPermits(1),
        Effect.flatMap(({ providerCallId }) =>
          deps.placed.record({ attemptId: attempt.attemptId, providerCallId, runId: attempt.runId, attempt: ref })
        ),
        Effect.catchTag("CallNotPlaced", (refused) =>
          Effect.gen(function*() {
            yield* Effect.logWarning("call not placed", {
              campaign_id: campaign.id,
              run_id: attempt.runId,
              reason: refused.message,
              permanent: refused.permanent,
              caller_id_refused: refused.callerIdRefused === true
            })
            const now = yield* Clock.currentTimeMillis
            // A pool number the carrier will not place calls from leaves the pool, and the contact is
            // dialled again from another one: the refusal was about our number, not theirs.
            const fromPool = refused.callerIdRefused === true && plan.callerIdPool !== null
            if (fromPool) {
              const removed = yield* deps.repo.refuseCallerId(
                campaign.id,
                plan.telephonyConfigurationId,
                attempt.callerNumber,
                refused.message,
                now
              )
              if (removed) {
                yield* Effect.logWarning("caller ID taken out of the pool", {
                  campaign_id: campaign.id,
                  caller_number: attempt.callerNumber,
                  reason: refused.message
                })
              }
            }
            yield* deps.repo.applyOutcome({
              attemptId: attempt.attemptId,
              // Redialled from another number: a call that never left, not a failure of the carrier path.
              outcome: fromPool ? "canceled" : "failed",
              // One reason whatever the carrier's API did (refused, unreachable, blocked): which one it was is
              // for the log above, or a base URL could be used to learn which internal ports answer. The
              // caller ID's refusal is the carrier's documented answer about our own number.
              endReason: refused.callerIdRefused === true ? "caller_id_refused" : "not_placed",
              durationSeconds: 0,
              providerCallId: null,
              now,
              redialAt: fromPool
                ? now
                : retryAfterPlacementFailure(campaign.retry_config, refused.permanent, attempt.attemptNumber, now) ??
                  undefined
            })
          })),
        // A child of the campaign's actor span: a trace shows one campaign's fiber and each of its calls.
        Effect.withSpan("CampaignScheduler.call", {
          attributes: {
            "campaign.id": campaign.id,
            "organization.id": campaign.organization_id,
            "run.id": attempt.runId,
            "contact.id": attempt.contactId,
            "attempt.number": attempt.attemptNumber,
            provider: account.provider
          }
        }),
        Effect.catchAllCause((cause) => Effect.logError("placing a call failed", cause)),
        Effect.interruptible
      )
  )
}

/** Pauses the campaign for its failing carrier path, logging the window and its latest failures. */
const trip = (deps: ActorDeps, campaign: ActorCampaign, verdict: BreakerVerdict, now: number) =>
  Effect.gen(function*() {
    const window = campaign.circuit_breaker.window_seconds * 1000
    const ended = yield* deps.repo.breakerOutcomes(campaign.id, now - window, campaign.breaker_reset_at)
    const failures = ended.filter((row) => isBreakerFailure(row.outcome)).slice(-TRIP_FAILURES_LOGGED)
    yield* deps.repo.tripBreaker(
      campaign.id,
      now,
      `Paused: ${verdict.failures} of the last ${verdict.calls} calls failed (threshold ${campaign.circuit_breaker.failure_threshold})`,
      {
        calls_in_window: verdict.calls,
        failures_in_window: verdict.failures,
        failure_ratio: verdict.failureRatio,
        recent_failures: failures.map((row) => ({
          run_id: row.run_id,
          outcome: row.outcome,
          reason: row.end_reason,
          at: row.ended_at
        }))
      }
    )
  })

/**
 * One campaign's dialer, while this process holds its lease: dials due contacts as fast as the
 * rate, the campaign's and the organization's live-call limits, the calling windows and the
 * breaker allow, and no faster. Everything it knows is rebuilt from the database when it starts,
 * so a restart (after a crash, or in another process) continues exactly where the last one was.
 */
export const runCampaignActor = (deps: ActorDeps, campaignId: CampaignId, wakes: Queue.Dequeue<void>) =>
  Effect.gen(function*() {
    const campaign = yield* deps.repo.loadCampaign(campaignId)
    if (!campaign || campaign.state !== "running" || campaign.lease_owner !== deps.owner) return "stopped" as ActorExit
    yield* Effect.annotateCurrentSpan({ "organization.id": campaign.organization_id })

    const outbound = yield* deps.configs.outbound(campaign.organization_id, campaign.telephony_configuration_id).pipe(
      Effect.either
    )
    if (outbound._tag === "Left") {
      yield* deps.repo.pauseWithReason(
        campaign.id,
        yield* Clock.currentTimeMillis,
        "telephony_unavailable",
        outbound.left.message
      )
      return "stopped" as ActorExit
    }
    const account = carrierAccount(outbound.right)
    const adapter = deps.telephony.adapter(account.provider)
    const definition = yield* deps.repo.dialPlanDefinition(campaign.workflow_id)
    const plan: DialPlan = {
      provider: account.provider,
      telephonyConfigurationId: outbound.right.id,
      callerNumber: outbound.right.caller_ids[0]!,
      callerIdPool: campaign.caller_id_pool,
      definitionId: definition?.id ?? null,
      versionNumber: definition?.version_number ?? null
    }
    const rate = campaign.rate_limit_per_second
    const pacer = yield* Ref.make(
      pacerFrom(rate, yield* deps.repo.recentDispatches(campaign.id, rate), yield* Clock.currentTimeMillis)
    )
    const callMillis = (deps.settings.maxCallSeconds + deps.settings.deadlineGraceSeconds) * 1000

    /** Sleeps up to `ms`, or less when something about this campaign changed. */
    const rest = (ms: number) => Queue.take(wakes).pipe(Effect.timeout(Math.max(1, ms)), Effect.ignore)

    /**
     * Claims the batch's contacts and hands each claimed attempt to the carrier as soon as the
     * pacer allows (all at once, unless the claim was quicker than planned). Once its turn has
     * come, nothing here can be interrupted, so an attempt, once claimed, is always handed to the
     * carrier (a pause stops the next claim, not this batch).
     */
    const claimAndPlace = (batch: BatchPlan, now: number) =>
      Effect.uninterruptibleMask((restore) =>
        Effect.gen(function*() {
          const giveBack = yield* restore(deps.claimTurns.take(campaign.organization_id))
          const claim: Claim = yield* deps.repo.claim({
            campaign,
            owner: deps.owner,
            wanted: batch.size,
            now,
            deadlineAt: now + callMillis,
            orgLimit: deps.settings.orgMaxConcurrentCalls,
            plan
          }).pipe(Effect.ensuring(giveBack))
          const claimed = yield* Clock.currentTimeMillis
          yield* Ref.update(pacer, (current) => claimTook(current, claimed - now))
          let waiting = claim._tag === "Claimed" ? claim.attempts : []
          while (waiting.length > 0) {
            const at = yield* Clock.currentTimeMillis
            const current = yield* Ref.get(pacer)
            const count = Math.min(waiting.length, available(current, at))
            if (count === 0) {
              yield* Effect.sleep(Math.max(1, readyAt(current, at, 1) - at))
              continue
            }
            yield* Ref.update(pacer, (latest) => handedOut(latest, at, count))
            for (const attempt of waiting.slice(0, count)) {
              yield* FiberSet.run(deps.placements, place(deps, campaign, account, adapter, plan, attempt, pacer))
            }
            waiting = waiting.slice(count)
          }
          return claim
        })
      )

    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (!isWithinSchedule(campaign.schedule_config, now)) {
        const opens = nextWindowStart(campaign.schedule_config, now)
        // Sleeping in bounded steps keeps the lease check (in the claim) and wake-ups responsive.
        yield* rest(opens === null ? deps.settings.pollMillis * 60 : Math.min(opens - now, 60_000))
        continue
      }
      const batch = nextBatch(yield* Ref.get(pacer), now)
      if (batch.claimAt > now || batch.size === 0) {
        yield* Effect.sleep(Math.max(1, batch.claimAt - now))
        continue
      }
      // Held here, before the claim: no contact is taken while the process could not dial it in time.
      yield* deps.saturation.awaitHeadroom
      // The breaker is checked by the claim itself: an outcome that arrived a moment ago stops the very next dial.
      const claim = yield* claimAndPlace(batch, yield* Clock.currentTimeMillis)
      switch (claim._tag) {
        case "Lost":
          return "stopped" as ActorExit
        case "Changed":
          return "reload" as ActorExit
        case "Tripped":
          yield* trip(deps, campaign, claim.verdict, now)
          return "stopped" as ActorExit
        case "Full":
          yield* rest(claim.limit === "organization" ? ORG_FULL_RECHECK_MS : deps.settings.pollMillis)
          break
        case "CallerIdsBusy":
          // Bounded like any wait for work, so a pool or number edited meanwhile is seen soon.
          yield* rest(Math.min(claim.until - now, deps.settings.pollMillis))
          break
        case "NoCallerIds":
          yield* deps.repo.pauseWithReason(
            campaign.id,
            now,
            "caller_ids_unavailable",
            "No number of the caller-ID pool can place calls: each is inactive, refused by the carrier or not a number of the telephony configuration. Edit the pool or the phone numbers, then resume"
          )
          return "stopped" as ActorExit
        case "NoneDue": {
          if (claim.nextDueAt === null && claim.dialing === 0) {
            if (yield* deps.repo.complete(campaign.id, now)) {
              yield* Effect.logInfo("campaign completed", { campaign_id: campaign.id })
              return "stopped" as ActorExit
            }
          }
          const due = claim.nextDueAt === null ? deps.settings.pollMillis : claim.nextDueAt.getTime() - now
          yield* rest(Math.min(Math.max(due, 1), deps.settings.pollMillis))
          break
        }
        case "Claimed":
          break
      }
    }
  }).pipe(
    // A trace of its own, whoever started it (a poll, a request that rang the doorbell): the actor outlives them.
    Effect.withSpan("CampaignScheduler.actor", { root: true, attributes: { "campaign.id": campaignId } })
  )
