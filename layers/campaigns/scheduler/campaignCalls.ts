import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import { CampaignCalls } from "../../../services/CampaignCalls.ts"
import { CampaignDoorbell } from "../../../services/CampaignDoorbell.ts"
import { CarrierAccounts } from "../../../services/CarrierAccounts.ts"
import { DialerRepo } from "../../../services/DialerRepo.ts"
import { PublicUrl } from "../../../services/PublicUrl.ts"
import { SecretBox } from "../../../services/SecretBox.ts"
import { type CallStatus, type Provider, Telephony, type WebhookRequest } from "../../../services/Telephony.ts"
import { Forbidden } from "../../../src/domain/errors.ts"
import type { CampaignId } from "../../../src/domain/ids.ts"
import { mediaStreamUrl, mediaToken } from "../../../src/telephony/mediaToken.ts"
import { makeDispatchStatus } from "../dispatchStatus.ts"
import { AttemptRefs } from "./attemptRefs.ts"
import { SchedulerSettings } from "./schedulerSettings.ts"

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
    const attempts = yield* AttemptRefs
    const dispatchOf = yield* makeDispatchStatus

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
        if (!attempt || Option.isNone(account) || !(yield* adapter.verifyWebhook(account.value, request))) {
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
        // A single call's slot frees the organization's limit, which waiting actors re-check on their own.
        if (applied.campaignId !== null) yield* doorbell.slotFreed(applied.campaignId)
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

    const dispatchStatus = Effect.fn("CampaignCalls.dispatchStatus")(
      (campaignId: CampaignId) => dispatchOf(campaignId),
      Effect.catchTag("SqlError", Effect.die)
    )

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
      if (applied?.campaignId) yield* doorbell.slotFreed(applied.campaignId)
    }, Effect.orDie)

    return CampaignCalls.of({ statusCallback, answer, dispatchStatus, mediaRefused })
  })
)
