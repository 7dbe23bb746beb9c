import { Effect, Option } from "effect"
import type { OutboundHttp } from "../../../services/OutboundHttp.ts"
import {
  CarrierUnavailable,
  type TransferOutcome,
  type WarmTransferAdapter,
  type WarmTransferRequest
} from "../../../services/Telephony.ts"
import { carrierRequest } from "./carrierRequest.ts"
import { apiBase, callPath, headers, PlivoCallReply, unavailable } from "./plivoRest.ts"
import { escapeXml } from "./xml.ts"

const XML = `<?xml version="1.0" encoding="UTF-8"?>`

const markupUrl = (request: WarmTransferRequest, part: "destination" | "caller") =>
  `${request.markupUrl}?${new URLSearchParams(part === "destination" ? { part } : { part, room: request.room })}`

/**
 * The conference both calls meet in (plivo.com/docs/voice/xml/conference): either leaving ends
 * it. The destination's `callbackUrl` hears `ConferenceAction=enter` once it is in, after the
 * whisper.
 */
const destinationXml = (request: WarmTransferRequest) =>
  `${XML}<Response><Speak>${escapeXml(request.whisper)}</Speak><Conference endConferenceOnExit="true" callbackUrl="${
    escapeXml(request.eventUrl)
  }" callbackMethod="POST">${escapeXml(request.room)}</Conference></Response>`

const callerXml = (room: string) =>
  `${XML}<Response><Conference endConferenceOnExit="true">${escapeXml(room)}</Conference></Response>`

/** The leg's hangup before it entered the conference, by its `CallStatus`. */
const endedOutcome = (status: string): Exclude<TransferOutcome, "answered"> => {
  switch (status) {
    case "busy":
      return "busy"
    case "no-answer":
    case "timeout":
      return "no_answer"
    default:
      return "failed"
  }
}

const call = (account: Parameters<WarmTransferAdapter["dial"]>[0], path: string, body: Record<string, unknown>) =>
  carrierRequest("Plivo", apiBase(account), path, {
    method: "POST",
    headers: headers(account),
    body: JSON.stringify(body)
  }, PlivoCallReply).pipe(Effect.mapError((error) => new CarrierUnavailable({ message: error.message })))

/**
 * Plivo's warm transfer: the destination is a new call (`ring_timeout` its ring time) whose
 * `answer_url` gives it the whisper (`<Speak>`) and the conference; its `hangup_url` says busy,
 * no-answer or failed, and the conference's callback says when it entered. The caller is then
 * transferred (`aleg_url`) into the same conference, which ends its `<Stream>` with the agent.
 */
export const plivoWarmTransfer: WarmTransferAdapter<OutboundHttp> = {
  dial: (account, request) =>
    call(account, callPath(account), {
      from: request.from.replace(/^\+/, ""),
      to: request.endpoint.kind === "number" ? request.endpoint.number.replace(/^\+/, "") : request.endpoint.uri,
      answer_url: markupUrl(request, "destination"),
      answer_method: "POST",
      hangup_url: request.eventUrl,
      hangup_method: "POST",
      ring_timeout: request.timeoutSeconds
    }).pipe(
      Effect.flatMap((reply) =>
        reply.status < 300 && typeof reply.body.request_uuid === "string"
          ? Effect.succeed({ legId: reply.body.request_uuid })
          : Effect.fail(unavailable("ring the transfer's destination", reply.status))
      ),
      Effect.withSpan("Plivo.warmDial")
    ),

  parseEvent: (webhook) => {
    const fields = new URLSearchParams(webhook.rawBody)
    const legId = fields.get("CallUUID")
    if (legId === null) return Option.none()
    if (fields.get("ConferenceAction") === "enter") return Option.some({ _tag: "Briefed", legId })
    // The hangup_url's report: the leg is over (answered and gone before the conference counts as failed).
    if (fields.get("Event") === "Hangup") {
      return Option.some({ _tag: "Ended", legId, outcome: endedOutcome(fields.get("CallStatus") ?? "") })
    }
    return Option.none()
  },

  // `<Speak>` in the leg's answer XML says the whisper.
  brief: null,

  join: (account, caller, _legId, request) =>
    call(account, callPath(account, caller.liveCallId ?? caller.providerCallId), {
      legs: "aleg",
      aleg_url: markupUrl(request, "caller"),
      aleg_method: "POST"
    }).pipe(
      Effect.flatMap((reply) =>
        reply.status < 300 ? Effect.void : Effect.fail(unavailable("join the caller to the destination", reply.status))
      ),
      Effect.withSpan("Plivo.warmJoin")
    ),

  eventReply: { contentType: "text/xml", body: `${XML}<Response/>` },

  markup: {
    destination: (request) => ({ contentType: "text/xml", body: destinationXml(request) }),
    caller: (room) => ({ contentType: "text/xml", body: callerXml(room) })
  }
}
