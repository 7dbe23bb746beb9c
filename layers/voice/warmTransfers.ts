import { Clock, Deferred, Duration, Effect, Option } from "effect"
import type { CarrierAccountsShape } from "../../services/CarrierAccounts.ts"
import type {
  CarrierAccount,
  CarrierAdapter,
  PlacedCallRef,
  TelephonyShape,
  TransferOutcome,
  WarmTransferAdapter,
  WarmTransferRequest,
  WebhookRequest
} from "../../services/Telephony.ts"
import { transferEventUrl } from "../../src/telephony/mediaToken.ts"
import type { TransferEndpoint } from "../../src/tools/transferDestination.ts"
import type { MediaRun } from "./voiceRuns.ts"

/** A warm transfer under way: the destination's leg, once the carrier named it, and the outcome the call waits on. */
interface PendingWarm {
  readonly account: CarrierAccount
  readonly warm: WarmTransferAdapter
  readonly caller: PlacedCallRef
  readonly request: WarmTransferRequest
  legId: string | null
  /** The leg's live id where its callbacks name it apart from the placement's (Plivo's CallUUID). */
  liveLegId: string | null
  /** The carrier said the leg is over: nothing is left to hang up. */
  legEnded: boolean
  readonly outcome: Deferred.Deferred<TransferOutcome>
}

/**
 * Warm transfers of live carrier calls. The caller stays on the agent's media stream while the
 * carrier rings the destination on a second call from the same line; once it answered and heard
 * the whisper, the caller is joined with it (the carrier's conference or bridge) and the agent
 * leaves. A destination that is busy, does not answer or fails leaves the caller with the agent.
 */
export const makeWarmTransfers = (
  accounts: CarrierAccountsShape,
  telephony: TelephonyShape,
  publicUrl: string,
  reportGrace: Duration.Duration
) =>
  Effect.sync(() => {
    const pending = new Map<number, PendingWarm>()

    const settle = (warm: PendingWarm, outcome: TransferOutcome) => Deferred.succeed(warm.outcome, outcome)

    /**
     * Rings `endpoint` for the run's live call with `whisper` for it, joins the caller when it
     * answers, and says how it went. `accepted` false: the carrier refused, the call is as it was.
     */
    const transfer = (
      run: MediaRun,
      callId: string | null,
      endpoint: TransferEndpoint,
      timeoutSeconds: number,
      whisper: string
    ) =>
      Effect.gen(function*() {
        const providerCallId = run.provider_call_id ?? callId
        const failed = { outcome: "failed" as const, accepted: false }
        if (
          run.channel !== "telephony" || run.telephony_configuration_id === null || providerCallId === null ||
          run.line_number === null
        ) return failed
        const account = yield* accounts.forConfiguration(run.organization_id, run.telephony_configuration_id)
        if (Option.isNone(account)) return failed
        const adapter: CarrierAdapter = telephony.adapter(account.value.provider)
        if (adapter.warm === undefined) return failed
        const warm: PendingWarm = {
          account: account.value,
          warm: adapter.warm,
          caller: { providerCallId, liveCallId: run.live_call_id ?? callId },
          request: {
            endpoint,
            from: run.line_number,
            timeoutSeconds,
            whisper,
            eventUrl: transferEventUrl(publicUrl, account.value.provider, run.id),
            markupUrl: `${transferEventUrl(publicUrl, account.value.provider, run.id)}/markup`,
            room: `talkgraph-transfer-${run.id}-${yield* Clock.currentTimeMillis}`
          },
          legId: null,
          liveLegId: null,
          legEnded: false,
          outcome: yield* Deferred.make<TransferOutcome>()
        }
        pending.set(run.id, warm)
        const dialled = yield* adapter.warm.dial(warm.account, warm.request).pipe(Effect.either)
        if (dialled._tag === "Left") {
          yield* Effect.logWarning("The carrier refused a warm transfer", {
            run_id: run.id,
            error: dialled.left.message
          })
          return failed
        }
        warm.legId = dialled.right.legId
        const outcome = yield* Deferred.await(warm.outcome).pipe(
          Effect.timeoutTo({
            duration: Duration.sum(Duration.seconds(timeoutSeconds), reportGrace),
            onSuccess: (value): TransferOutcome => value,
            onTimeout: (): TransferOutcome => "failed"
          })
        )
        // Given up on our side (no word, or the briefing or the join failed): the destination must not stay on the line.
        if (outcome !== "answered" && !warm.legEnded) {
          yield* adapter.hangUp(warm.account, {
            providerCallId: dialled.right.legId,
            liveCallId: warm.liveLegId ?? dialled.right.legId
          })
            .pipe(Effect.ignoreLogged)
        }
        return { outcome, accepted: true }
      }).pipe(
        Effect.ensuring(Effect.sync(() => pending.delete(run.id))),
        Effect.withSpan("VoiceCalls.warmTransfer", { attributes: { run_id: run.id } })
      )

    /** Whether the run's transfer callbacks are a warm transfer's destination leg. */
    const isPending = (runId: number) => pending.has(runId)

    /**
     * A (verified) callback of the destination's leg: briefs it once answered where the carrier
     * needs telling, joins the caller once it heard the whisper, or settles why it did not answer.
     */
    const event = (runId: number, request: WebhookRequest) =>
      Effect.gen(function*() {
        const warm = pending.get(runId)
        if (warm === undefined) return null
        const reply = warm.warm.eventReply
        const step = warm.warm.parseEvent(request)
        if (Option.isNone(step)) return reply
        const { legId } = step.value
        // The caller's own events on the same URL (entering Twilio's conference) are not the leg's.
        // The leg's may name it by another id than its placement's (Plivo's CallUUID).
        if (legId !== null && (legId === warm.caller.providerCallId || legId === warm.caller.liveCallId)) return reply
        if (legId !== null && legId !== warm.legId) warm.liveLegId = legId
        if (yield* Deferred.isDone(warm.outcome)) return reply
        const failed = (what: string) => (error: { readonly message: string }) =>
          Effect.logWarning(`A warm transfer could not ${what}`, { run_id: runId, error: error.message }).pipe(
            Effect.zipRight(settle(warm, "failed"))
          )
        switch (step.value._tag) {
          case "Answered": {
            const brief = warm.warm.brief
            if (brief !== null) {
              yield* brief(warm.account, step.value.legId, warm.request).pipe(
                Effect.catchAll(failed("brief the destination"))
              )
            }
            return reply
          }
          case "Briefed":
            yield* warm.warm.join(warm.account, warm.caller, legId ?? warm.legId ?? "", warm.request).pipe(
              Effect.zipRight(settle(warm, "answered")),
              Effect.catchAll(failed("join the caller"))
            )
            return reply
          case "Ended":
            warm.legEnded = true
            yield* settle(warm, step.value.outcome)
            return reply
        }
      })

    /** The instructions the destination's call fetches (the whisper, the conference); null when no warm transfer is under way. */
    const destinationMarkup = (runId: number) => {
      const warm = pending.get(runId)
      return warm === undefined || warm.warm.markup === null ? null : warm.warm.markup.destination(warm.request)
    }

    return { transfer, isPending, event, destinationMarkup }
  })
