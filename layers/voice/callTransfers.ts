import type { Socket } from "@effect/platform"
import { Deferred, Duration, Effect, Option } from "effect"
import type { CarrierAccountsShape } from "../../services/CarrierAccounts.ts"
import type { Provider, TelephonyShape, TransferOutcome, WebhookRequest } from "../../services/Telephony.ts"
import { Forbidden, NotFound } from "../../src/domain/errors.ts"
import { transferEventUrl, transferMarkupUrl } from "../../src/telephony/mediaToken.ts"
import { type TransferEndpoint, transferEndpointOf } from "../../src/tools/transferDestination.ts"
import type { MediaLinks } from "./mediaLinks.ts"
import type { MediaRun, VoiceRuns } from "./voiceRuns.ts"
import { makeWarmTransfers } from "./warmTransfers.ts"

/** A caller's new media stream after a transfer that was not answered, and how to let go of it. */
export interface ReturnedStream {
  readonly socket: Socket.Socket
  /** Completed by the call once it is over: the connection's handler then ends. */
  readonly released: Deferred.Deferred<void>
}

/** How long the link back to the agent stays valid: the carrier connects at once. */
const RETURN_LINK_SECONDS = 120

/**
 * How long past its ring timeout a transfer waits for the carrier's word before it is taken as
 * failed: a callback lost on the way must not hold the call (and its model) for ever.
 */
const REPORT_GRACE = Duration.seconds(30)

/** The ring timeouts every carrier's transfer accepts (Telnyx's `timeout_secs` is 5–600). */
const MIN_TIMEOUT_SECONDS = 5
const MAX_TIMEOUT_SECONDS = 600

const destinationText = (endpoint: TransferEndpoint) => endpoint.kind === "number" ? endpoint.number : endpoint.uri

/**
 * Cold transfers of live carrier calls (warm ones are warmTransfers.ts's, on the same callback route): the carrier is asked to ring the destination and bridge
 * the caller to it; its callbacks (signed, checked with the run's telephony configuration) say how
 * the destination answered. The call waits on the process holding its media socket, which is
 * where the outcome is delivered.
 */
export const makeCallTransfers = (
  runs: VoiceRuns,
  accounts: CarrierAccountsShape,
  telephony: TelephonyShape,
  links: MediaLinks,
  publicUrl: string
) =>
  Effect.gen(function*() {
    const waiting = new Map<number, Deferred.Deferred<TransferOutcome>>()
    /** Calls whose caller is being connected back to the agent, by run: the new stream once it arrives. */
    const returning = new Map<number, Deferred.Deferred<ReturnedStream>>()
    const warm = yield* makeWarmTransfers(accounts, telephony, publicUrl, REPORT_GRACE)

    /** The run's carrier and account, when the request is signed by that account; refused like a bad signature otherwise. */
    const verified = (provider: Provider, runId: number, request: WebhookRequest) =>
      Effect.gen(function*() {
        const run = yield* runs.mediaRun(runId)
        const account = run && run.mode === provider && run.telephony_configuration_id !== null
          ? yield* accounts.forConfiguration(run.organization_id, run.telephony_configuration_id)
          : Option.none()
        const adapter = telephony.adapter(provider)
        if (Option.isNone(account) || !(yield* adapter.verifyWebhook(account.value, request))) {
          yield* Effect.logWarning("Transfer callback refused: unknown call or bad signature", {
            provider,
            run_id: runId
          })
          return yield* new Forbidden({ message: "Invalid webhook signature" })
        }
        return adapter
      })

    /**
     * Transfers the run's live call (`callId`: the id its media stream started with) and waits for
     * the outcome. The carrier refusing the request (`accepted` false), or never reporting, is `failed`.
     */
    const transfer = (run: MediaRun, callId: string | null, endpoint: TransferEndpoint, timeoutSeconds: number) =>
      Effect.gen(function*() {
        const providerCallId = run.provider_call_id ?? callId
        if (run.channel !== "telephony" || run.telephony_configuration_id === null || providerCallId === null) {
          return { outcome: "failed" as const, accepted: false }
        }
        const account = yield* accounts.forConfiguration(run.organization_id, run.telephony_configuration_id)
        if (Option.isNone(account)) return { outcome: "failed" as const, accepted: false }
        const provider = account.value.provider
        const timeout = Math.min(MAX_TIMEOUT_SECONDS, Math.max(MIN_TIMEOUT_SECONDS, Math.round(timeoutSeconds)))
        const outcome = yield* Deferred.make<TransferOutcome>()
        waiting.set(run.id, outcome)
        const asked = yield* telephony.adapter(provider).transfer(
          account.value,
          { providerCallId, liveCallId: run.live_call_id ?? callId },
          {
            endpoint,
            timeoutSeconds: timeout,
            eventUrl: transferEventUrl(publicUrl, provider, run.id),
            markupUrl: transferMarkupUrl(publicUrl, provider, run.id, destinationText(endpoint), timeout)
          }
        ).pipe(Effect.either)
        if (asked._tag === "Left") {
          yield* Effect.logWarning("The carrier refused a transfer", { run_id: run.id, error: asked.left.message })
          return { outcome: "failed" as const, accepted: false }
        }
        const reported = yield* Deferred.await(outcome).pipe(
          Effect.timeoutTo({
            duration: Duration.sum(Duration.seconds(timeout), REPORT_GRACE),
            onSuccess: (value): TransferOutcome => value,
            onTimeout: (): TransferOutcome => "failed"
          })
        )
        return { outcome: reported, accepted: true }
      }).pipe(
        Effect.ensuring(Effect.sync(() => waiting.delete(run.id))),
        Effect.withSpan("VoiceCalls.transfer", { attributes: { run_id: run.id } })
      )

    /** A carrier's report on a transfer: the first outcome it gives settles the waiting call. */
    const event = Effect.fn("VoiceCalls.transferEvent")(
      function*(provider: Provider, runId: number, request: WebhookRequest) {
        const adapter = yield* verified(provider, runId, request)
        if (warm.isPending(runId)) {
          const reply = yield* warm.event(runId, request)
          if (reply !== null) return reply
        }
        const outcome = adapter.parseTransferEvent(request)
        const pending = waiting.get(runId)
        if (Option.isNone(outcome) || pending === undefined) return adapter.transferEventReply(null)
        // Not answered, on a carrier whose transfer ended the agent's stream: the caller comes back on a new one.
        const back = outcome.value !== "answered" && adapter.returnsAfterTransfer && !returning.has(runId)
        if (back) returning.set(runId, yield* Deferred.make<ReturnedStream>())
        yield* Deferred.succeed(pending, outcome.value)
        if (!back) return adapter.transferEventReply(null)
        const link = yield* links.link(provider, runId, RETURN_LINK_SECONDS)
        return adapter.transferEventReply(link.url)
      }
    )

    /** Whether a media connection for this run is its caller coming back after a transfer. */
    const expectsReturn = (runId: number) => returning.has(runId)

    /** Hands a returning caller's socket to its call, and holds it until the call is over. */
    const handBack = (runId: number, socket: Socket.Socket) =>
      Effect.gen(function*() {
        const waiter = returning.get(runId)
        if (waiter === undefined) return
        const released = yield* Deferred.make<void>()
        // Only the first connection is the caller's; the call forgets the waiter once it took it.
        if (!(yield* Deferred.succeed(waiter, { socket, released }))) return
        yield* Deferred.await(released)
      })

    /** The caller's new stream after a transfer that was not answered, if the carrier brings it within `within`. */
    const awaitReturn = (runId: number, within: Duration.DurationInput) =>
      Effect.suspend(() => {
        const waiter = returning.get(runId)
        if (waiter === undefined) return Effect.succeedNone
        return Deferred.await(waiter).pipe(
          Effect.timeoutOption(within),
          Effect.ensuring(Effect.sync(() => {
            if (returning.get(runId) === waiter) returning.delete(runId)
          }))
        )
      })

    /** The instructions a carrier fetches for a transfer it was asked for (Plivo's `aleg_url`). */
    const markup = Effect.fn("VoiceCalls.transferMarkup")(
      function*(provider: Provider, runId: number, request: WebhookRequest) {
        const adapter = yield* verified(provider, runId, request)
        const query = new URL(request.url).searchParams
        // A warm transfer's: the destination's while it rings, the caller's (its conference) once it is joined.
        const part = query.get("part")
        const room = query.get("room")
        const instructions = part === "destination"
          ? warm.destinationMarkup(runId)
          : part === "caller" && room !== null && adapter.warm?.markup
          ? adapter.warm.markup.caller(room)
          : undefined
        if (instructions === null) return yield* new NotFound({ resource: "Transfer", id: runId })
        if (instructions !== undefined) return instructions
        const endpoint = transferEndpointOf(query.get("to") ?? "")
        const timeout = Number(query.get("timeout"))
        if (endpoint === null || !Number.isInteger(timeout)) {
          return yield* new NotFound({ resource: "Transfer", id: runId })
        }
        return adapter.transferMarkup({
          endpoint,
          timeoutSeconds: timeout,
          eventUrl: transferEventUrl(publicUrl, provider, runId)
        })
      }
    )

    return { transfer, warmTransfer: warm.transfer, event, markup, expectsReturn, handBack, awaitReturn }
  })
