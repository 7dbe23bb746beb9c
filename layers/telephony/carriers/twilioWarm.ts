import { Effect, Option } from "effect"
import type { OutboundHttp } from "../../../services/OutboundHttp.ts"
import {
  CarrierUnavailable,
  type TransferOutcome,
  type WarmTransferAdapter,
  type WarmTransferRequest
} from "../../../services/Telephony.ts"
import { callsPath, twilioRequest } from "./twilioRest.ts"
import { escapeXml } from "./xml.ts"

const XML = `<?xml version="1.0" encoding="UTF-8"?>`

/**
 * The conference both legs meet in (twilio.com/docs/voice/twiml/conference): the first to enter
 * starts it; either leaving ends it, so neither is left alone in it.
 */
const conference = (request: WarmTransferRequest, callback: boolean) =>
  `<Dial><Conference endConferenceOnExit="true"${
    callback
      ? ` statusCallback="${escapeXml(request.eventUrl)}" statusCallbackEvent="join" statusCallbackMethod="POST"`
      : ""
  }>${escapeXml(request.room)}</Conference></Dial>`

/** The destination's leg: it hears the whisper (`<Say>`), then enters the conference, which reports the join. */
const destinationTwiml = (request: WarmTransferRequest) =>
  `${XML}<Response><Say>${escapeXml(request.whisper)}</Say>${conference(request, true)}</Response>`

/** A call's final `CallStatus` before it was joined, as the reason the transfer did not go through. */
const endedOutcome = (status: string): Exclude<TransferOutcome, "answered"> | null => {
  switch (status) {
    case "busy":
      return "busy"
    case "no-answer":
      return "no_answer"
    // `completed`: answered, then gone before it entered the conference (hung up during the whisper).
    case "failed":
    case "canceled":
    case "completed":
      return "failed"
    default:
      return null
  }
}

const refused = (what: string) => (reply: { readonly status: number; readonly body: { readonly code?: unknown } }) =>
  reply.status >= 200 && reply.status < 300
    ? Effect.void
    : Effect.fail(
      new CarrierUnavailable({
        message: `Twilio did not ${what} (HTTP ${reply.status}${reply.body.code ? `, code ${reply.body.code}` : ""})`
      })
    )

/**
 * Twilio's warm transfer: the destination is a new call (Calls API with inline `Twiml`, `Timeout`
 * as the ring time) whose status callbacks say busy, no-answer or failed; its conference's `join`
 * event says it heard the whisper. The caller is then updated into the same conference, which ends
 * its `<Connect><Stream>` with the agent.
 */
export const twilioWarmTransfer: WarmTransferAdapter<OutboundHttp> = {
  dial: (account, request) =>
    Effect.gen(function*() {
      const form = new URLSearchParams({
        To: request.endpoint.kind === "number" ? request.endpoint.number : request.endpoint.uri,
        From: request.from,
        Twiml: destinationTwiml(request),
        Timeout: String(request.timeoutSeconds),
        StatusCallback: request.eventUrl,
        StatusCallbackMethod: "POST"
      })
      for (const event of ["answered", "completed"]) form.append("StatusCallbackEvent", event)
      const reply = yield* twilioRequest(account, callsPath(account), form).pipe(
        Effect.mapError((error) => new CarrierUnavailable({ message: error.message }))
      )
      yield* refused("ring the transfer's destination")(reply)
      if (typeof reply.body.sid !== "string") {
        return yield* new CarrierUnavailable({ message: "Twilio did not name the destination's call" })
      }
      return { legId: reply.body.sid }
    }).pipe(Effect.withSpan("Twilio.warmDial")),

  parseEvent: (webhook) => {
    const params = new URLSearchParams(webhook.rawBody)
    const legId = params.get("CallSid")
    if (legId === null) return Option.none()
    // The conference's event for a participant entering (the caller's own join reports here too).
    if (params.get("StatusCallbackEvent") === "participant-join") return Option.some({ _tag: "Briefed", legId })
    const status = params.get("CallStatus") ?? ""
    if (status === "in-progress") return Option.some({ _tag: "Answered", legId })
    const outcome = endedOutcome(status)
    return outcome === null ? Option.none() : Option.some({ _tag: "Ended", legId, outcome })
  },

  // `<Say>` in the leg's own TwiML speaks the whisper.
  brief: null,

  join: (account, caller, _legId, request) =>
    twilioRequest(
      account,
      callsPath(account, `/${encodeURIComponent(caller.providerCallId)}`),
      new URLSearchParams({ Twiml: `${XML}<Response>${conference(request, false)}</Response>` })
    ).pipe(
      Effect.mapError((error) => new CarrierUnavailable({ message: error.message })),
      Effect.flatMap(refused("join the caller to the destination")),
      Effect.withSpan("Twilio.warmJoin")
    ),

  eventReply: { contentType: "text/xml", body: `${XML}<Response/>` },

  // The leg's instructions go with the call itself.
  markup: null
}
