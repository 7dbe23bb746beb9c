import { Effect, Option } from "effect"
import type { OutboundHttp } from "../../../services/OutboundHttp.ts"
import {
  type CarrierAccount,
  CarrierUnavailable,
  type TransferOutcome,
  type WarmTransferAdapter,
  type WarmTransferRequest
} from "../../../services/Telephony.ts"
import { carrierRequest } from "./carrierRequest.ts"
import { apiBase, callsPath, digits, headers, VonageCallReply } from "./vonageRest.ts"

/** Vonage rings a created call for 1 to 120 seconds (`ringing_timer`). */
const MAX_RINGING_SECONDS = 120

/** The `notify` payload's key that marks the destination's briefing as over (payload values are strings). */
const BRIEFED = "talkgraph_briefed"

/** The conversation both legs meet in (developer.vonage.com/en/voice/voice-api/ncco-reference#conversation): either leaving ends it. */
const conversation = (room: string) => ({ action: "conversation", name: room, endOnExit: true })

/**
 * The destination's NCCO: the whisper (`talk`), then a `notify` to the transfer's URL (the only
 * word that the talk is over), then the conversation, where it waits for the caller. The notify's
 * answer is not an NCCO, so the NCCO goes on.
 */
const destinationNcco = (request: WarmTransferRequest) => [
  { action: "talk", text: request.whisper },
  { action: "notify", payload: { [BRIEFED]: request.room }, eventUrl: [request.eventUrl], eventMethod: "POST" },
  conversation(request.room)
]

/** The leg's status before it was joined, as the reason it did not go through; null while it rings. */
const endedOutcome = (status: unknown): Exclude<TransferOutcome, "answered"> | null => {
  switch (status) {
    case "busy":
    case "rejected":
      return "busy"
    case "timeout":
    case "unanswered":
      return "no_answer"
    case "failed":
    case "cancelled":
    case "completed":
      return "failed"
    default:
      return null
  }
}

const request = (account: CarrierAccount, method: "POST" | "PUT", path: string, body: Record<string, unknown>) =>
  Effect.flatMap(
    headers(account),
    (headers) =>
      carrierRequest("Vonage", apiBase(account), path, { method, headers, body: JSON.stringify(body) }, VonageCallReply)
  )
    .pipe(
      Effect.catchAllDefect((defect) =>
        Effect.fail(new CarrierUnavailable({ message: `Vonage credentials unusable: ${(defect as Error).name}` }))
      ),
      Effect.mapError((error) => new CarrierUnavailable({ message: error.message }))
    )

/**
 * Vonage's warm transfer: the destination is a new call created with its NCCO inline (`ringing_timer`
 * its ring time), whose events say busy, timeout or failed; its `notify` says it heard the
 * whisper. The caller's leg is then transferred into the same named conversation, which takes it
 * from the conversation it shared with the agent's WebSocket.
 */
export const vonageWarmTransfer: WarmTransferAdapter<OutboundHttp> = {
  dial: (account, warm) =>
    request(account, "POST", callsPath(), {
      to: [
        warm.endpoint.kind === "number"
          ? { type: "phone", number: digits(warm.endpoint.number) }
          : { type: "sip", uri: warm.endpoint.uri }
      ],
      from: { type: "phone", number: digits(warm.from) },
      ncco: destinationNcco(warm),
      event_url: [warm.eventUrl],
      event_method: "POST",
      ringing_timer: Math.min(MAX_RINGING_SECONDS, warm.timeoutSeconds)
    }).pipe(
      Effect.flatMap((reply) =>
        reply.status < 300 && typeof reply.body.uuid === "string"
          ? Effect.succeed({ legId: reply.body.uuid })
          : Effect.fail(
            new CarrierUnavailable({ message: `Vonage did not ring the destination (HTTP ${reply.status})` })
          )
      ),
      Effect.withSpan("Vonage.warmDial")
    ),

  parseEvent: (webhook) => {
    let event: Record<string, unknown>
    try {
      event = JSON.parse(webhook.rawBody || "{}")
    } catch {
      return Option.none()
    }
    // The notify request carries its payload only: it names no call.
    if (typeof event[BRIEFED] === "string") return Option.some({ _tag: "Briefed", legId: null })
    if (typeof event.uuid !== "string") return Option.none()
    if (event.status === "answered") return Option.some({ _tag: "Answered", legId: event.uuid })
    const outcome = endedOutcome(event.status)
    return outcome === null ? Option.none() : Option.some({ _tag: "Ended", legId: event.uuid, outcome })
  },

  // The `talk` in the leg's own NCCO says the whisper.
  brief: null,

  join: (account, caller, _legId, warm) =>
    request(account, "PUT", callsPath(caller.providerCallId), {
      action: "transfer",
      destination: { type: "ncco", ncco: [conversation(warm.room)] }
    }).pipe(
      Effect.flatMap((reply) =>
        reply.status < 300
          ? Effect.void
          : Effect.fail(new CarrierUnavailable({ message: `Vonage did not join the caller (HTTP ${reply.status})` }))
      ),
      Effect.withSpan("Vonage.warmJoin")
    ),

  eventReply: { contentType: "application/json", body: "{}" },

  // The leg's NCCO goes with the call itself.
  markup: null
}
