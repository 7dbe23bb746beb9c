import { Clock, Effect } from "effect"
import type { DialerRepoShape } from "../../services/DialerRepo.ts"
import type { CarrierAccount, TelephonyShape } from "../../services/Telephony.ts"
import { answerUrl, mediaStreamUrl, mediaToken, statusCallbackUrl } from "../../src/telephony/mediaToken.ts"
import type { SchedulerSettingsShape } from "../campaigns/scheduler/schedulerSettings.ts"
import type { CallLine, CallRows, OpenedCall } from "./callRows.ts"

export interface DialingDeps {
  readonly rows: CallRows
  readonly repo: DialerRepoShape
  readonly telephony: TelephonyShape
  readonly settings: SchedulerSettingsShape
  readonly publicUrl: string
  readonly sign: (purpose: string, message: string) => string
}

/** Said of a call the carrier did not take; which refusal it was (and the provider's words) is only logged. */
export const NOT_PLACED = "The carrier did not place the call"

/** How long an opened call holds its slot before reconciliation asks the carrier about it. */
export const callDeadline = (settings: SchedulerSettingsShape, now: number) =>
  now + (settings.maxCallSeconds + settings.deadlineGraceSeconds) * 1000

/**
 * Asks the carrier for an opened call, exactly as the campaign dialer does (campaignActor.ts
 * `place`): the answer and status callback URLs of its run and a signed, expiring media-stream
 * link. The carrier's id is recorded on the attempt; a refusal ends the attempt and its run as
 * failed (`not_placed`), which frees the slot.
 */
export const dialOpenedCall = (
  deps: DialingDeps,
  opened: OpenedCall,
  account: CarrierAccount,
  line: CallLine,
  to: string
) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const placed = yield* deps.telephony.adapter(account.provider).placeCall(account, {
      to,
      from: line.callerNumber,
      answerUrl: answerUrl(deps.publicUrl, account.provider, opened.runId),
      statusCallbackUrl: statusCallbackUrl(deps.publicUrl, account.provider, opened.runId),
      timeLimitSeconds: deps.settings.maxCallSeconds,
      mediaStreamUrl: mediaStreamUrl(
        deps.publicUrl,
        account.provider,
        opened.runId,
        mediaToken(
          deps.sign,
          opened.runId,
          Math.floor(now / 1000) + deps.settings.mediaTokenSeconds + deps.settings.maxCallSeconds
        )
      )
    }).pipe(Effect.either)
    const after = yield* Clock.currentTimeMillis
    if (placed._tag === "Right") {
      yield* deps.repo.recordPlaced([{ attemptId: opened.attemptId, providerCallId: placed.right.providerCallId }])
      yield* deps.rows.markPlaced(opened.callId, after)
      return true
    }
    yield* Effect.logWarning("call not placed", {
      call_id: opened.callId,
      run_id: opened.runId,
      reason: placed.left.message,
      permanent: placed.left.permanent
    })
    yield* deps.repo.applyOutcome({
      attemptId: opened.attemptId,
      outcome: "failed",
      endReason: "not_placed",
      error: NOT_PLACED,
      durationSeconds: 0,
      providerCallId: null,
      now: after
    })
    yield* deps.rows.markNotPlaced(opened.callId, NOT_PLACED, after)
    return false
  }).pipe(
    Effect.withSpan("Calls.dial", {
      attributes: { "call.id": opened.callId, "run.id": opened.runId, provider: account.provider }
    })
  )
