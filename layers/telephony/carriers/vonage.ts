import { Clock, Effect, Option } from "effect"
import type { OutboundHttp } from "../../../services/OutboundHttp.ts"
import {
  CallNotPlaced,
  type CarrierAdapter,
  CarrierUnavailable,
  type TransferOutcome,
  type TransferRequest
} from "../../../services/Telephony.ts"
import type { CallOutcome } from "../../../src/campaigns/retryPolicy.ts"
import { isValidVonageWebhook, vonageSignedPayload } from "../../../src/telephony/vonageJwt.ts"
import { carrierRequest, hungUp } from "./carrierRequest.ts"
import { apiBase, callsPath, digits, headers, VonageCallReply } from "./vonageRest.ts"
import { vonageWarmTransfer } from "./vonageWarm.ts"

/**
 * The NCCO the call is transferred into: one `connect` ringing the destination for `timeout`
 * seconds, its leg's events (started, ringing, answered, busy, timeout, …) sent to `eventUrl`.
 * `randomFromNumber` shows one of the application's own numbers to the destination. The connect
 * is `synchronous`: when it ends unanswered (busy, timeout, failed, rejected, unanswered) the NCCO
 * `eventUrl` answers replaces the rest of the call's, which brings the caller back to the agent
 * (developer.vonage.com/en/voice/voice-api/ncco-reference#connect).
 */
const transferNcco = (transfer: Omit<TransferRequest, "markupUrl">) => [{
  action: "connect",
  timeout: transfer.timeoutSeconds,
  eventUrl: [transfer.eventUrl],
  eventMethod: "POST",
  eventType: "synchronous",
  ...(transfer.endpoint.kind === "number" ? { randomFromNumber: true } : {}),
  endpoint: [
    transfer.endpoint.kind === "number"
      ? { type: "phone", number: digits(transfer.endpoint.number) }
      : { type: "sip", uri: transfer.endpoint.uri }
  ]
}]

/** The connect leg's status as a transfer outcome; `rejected` is the destination declining the call. */
const transferOutcomeOf = (status: unknown): TransferOutcome | null => {
  switch (status) {
    case "answered":
      return "answered"
    case "busy":
    case "rejected":
      return "busy"
    case "timeout":
    case "unanswered":
      return "no_answer"
    case "failed":
    case "cancelled":
      return "failed"
    default:
      return null
  }
}

/**
 * Vonage's call status as a campaign outcome; null while the call is live. `machine` and `human`
 * are detection's verdict, not an end: with `machine_detection: "continue"` the call goes on and
 * ends later with `completed` (developer.vonage.com/en/voice/voice-api/webhook-reference).
 */
const outcomeOf = (status: string | undefined): CallOutcome | null => {
  switch (status) {
    case "completed":
      return "completed"
    case "busy":
      return "busy"
    case "timeout":
    case "unanswered":
      return "no-answer"
    case "cancelled":
      return "canceled"
    case "failed":
    case "rejected":
      return "failed"
    default:
      return null
  }
}

/** The NCCO connecting the call to the agent's media WebSocket (16 kHz linear PCM). */
const streamNcco = (streamUrl: string) => ({
  contentType: "application/json",
  body: JSON.stringify([
    { action: "connect", endpoint: [{ type: "websocket", uri: streamUrl, "content-type": "audio/l16;rate=16000" }] }
  ])
})

/** `length_timer` is 1 to 7200 seconds; Vonage refuses the call with anything longer. */
const MAX_LENGTH_TIMER_SECONDS = 7200

const seconds = (
  value: unknown
) => (value === undefined || value === null || value === "" ? null : Math.round(Number(value)) || 0)

export const vonageAdapter: CarrierAdapter<OutboundHttp> = {
  placeCall: (account, call) =>
    Effect.gen(function*() {
      const reply = yield* Effect.flatMap(headers(account), (headers) =>
        carrierRequest("Vonage", apiBase(account), callsPath(), {
          method: "POST",
          headers,
          body: JSON.stringify({
            to: [{ type: "phone", number: digits(call.to) }],
            from: { type: "phone", number: digits(call.from) },
            answer_url: [call.answerUrl],
            answer_method: "POST",
            event_url: [call.statusCallbackUrl],
            event_method: "POST",
            length_timer: Math.min(Math.max(1, call.timeLimitSeconds), MAX_LENGTH_TIMER_SECONDS),
            ...(account.machineDetection ? { machine_detection: "continue" } : {})
          })
        }, VonageCallReply)).pipe(
          Effect.catchAllDefect((defect) =>
            Effect.fail(new CarrierUnavailable({ message: `Vonage credentials unusable: ${(defect as Error).name}` }))
          ),
          Effect.mapError((error) =>
            new CallNotPlaced({ message: error.message, permanent: false })
          )
        )
      if (reply.status >= 400 || typeof reply.body.uuid !== "string") {
        return yield* new CallNotPlaced({
          message: `Vonage refused the call (HTTP ${reply.status})`,
          permanent: reply.status >= 400 && reply.status < 500 && reply.status !== 429,
          callerIdRefused: reply.status >= 400 && reply.status < 500 &&
            (reply.body.invalid_parameters ?? []).some((parameter) => parameter.name?.startsWith("from") === true)
        })
      }
      return { providerCallId: reply.body.uuid }
    }).pipe(Effect.withSpan("Vonage.placeCall")),

  hangUp: (account, { providerCallId }) =>
    Effect.flatMap(
      headers(account),
      (headers) =>
        carrierRequest("Vonage", apiBase(account), callsPath(providerCallId), {
          method: "PUT",
          headers,
          body: JSON.stringify({ action: "hangup" })
        }, VonageCallReply)
    ).pipe(
      // 404 and 400: the call has already ended.
      Effect.flatMap(hungUp("Vonage", [400, 404])),
      Effect.withSpan("Vonage.hangUp")
    ),

  callStatus: (account, { providerCallId }) =>
    Effect.flatMap(
      headers(account),
      (headers) =>
        carrierRequest(
          "Vonage",
          apiBase(account),
          callsPath(providerCallId),
          { method: "GET", headers },
          VonageCallReply
        )
    )
      .pipe(
        Effect.flatMap((reply) =>
          reply.status >= 300
            ? Effect.fail(new CarrierUnavailable({ message: `Vonage did not report the call (HTTP ${reply.status})` }))
            : Effect.succeed({
              providerCallId,
              outcome: outcomeOf(reply.body.status),
              durationSeconds: seconds(reply.body.duration)
            })
        ),
        Effect.withSpan("Vonage.callStatus")
      ),

  verifyWebhook: (account, webhook) =>
    Effect.map(Clock.currentTimeMillis, (now) =>
      isValidVonageWebhook(
        account.credentials.signature_secret,
        webhook.headers["authorization"],
        vonageSignedPayload(webhook.url, webhook.rawBody),
        Math.floor(now / 1000)
      )),

  parseStatusCallback: (webhook) => {
    let event: Record<string, any>
    try {
      event = JSON.parse(webhook.rawBody || "{}")
    } catch {
      return Option.none()
    }
    if (typeof event.uuid !== "string") return Option.none()
    return Option.some({
      providerCallId: event.uuid,
      outcome: outcomeOf(event.status),
      durationSeconds: seconds(event.duration),
      answered: event.status === "answered",
      ...(event.status === "machine" || event.status === "human" ? { answeredBy: event.status } : {})
    })
  },

  // Vonage fetches a number's answer_url with from, to and uuid: as query parameters (GET) or a JSON body.
  parseIncomingCall: (webhook) => {
    let fields: Record<string, unknown> = Object.fromEntries(new URL(webhook.url).searchParams)
    if (webhook.rawBody) {
      try {
        fields = { ...fields, ...JSON.parse(webhook.rawBody) }
      } catch {
        return Option.none()
      }
    }
    const { uuid, from, to } = fields
    return typeof uuid === "string" && typeof from === "string" && typeof to === "string"
      ? Option.some({ providerCallId: uuid, from, to })
      : Option.none()
  },

  answerMarkup: (streamUrl) => streamNcco(streamUrl),

  // The caller's leg leaves the conversation it shared with the agent's WebSocket for the new NCCO
  // (developer.vonage.com/en/api/voice#updateCall, action "transfer").
  transfer: (account, { providerCallId }, transfer) =>
    Effect.flatMap(
      headers(account),
      (headers) =>
        carrierRequest("Vonage", apiBase(account), callsPath(providerCallId), {
          method: "PUT",
          headers,
          body: JSON.stringify({
            action: "transfer",
            destination: { type: "ncco", ncco: transferNcco(transfer) }
          })
        }, VonageCallReply)
    ).pipe(
      Effect.flatMap((reply) =>
        reply.status >= 200 && reply.status < 300
          ? Effect.void
          : Effect.fail(new CarrierUnavailable({ message: `Vonage did not transfer the call (HTTP ${reply.status})` }))
      ),
      Effect.withSpan("Vonage.transfer")
    ),

  parseTransferEvent: (webhook) => {
    try {
      return Option.fromNullable(transferOutcomeOf(JSON.parse(webhook.rawBody || "{}").status))
    } catch {
      return Option.none()
    }
  },

  // Answering the synchronous connect's unanswered event: an NCCO back to the agent's WebSocket, or
  // no NCCO (the call's NCCO ends with the connect).
  transferEventReply: (returnStreamUrl) =>
    returnStreamUrl === null ? { contentType: "application/json", body: "{}" } : streamNcco(returnStreamUrl),

  // The caller's leg left the conversation with the agent's WebSocket; the NCCO the synchronous connect's event answers brings it back.
  returnsAfterTransfer: true,

  transferMarkup: (transfer) => ({ contentType: "application/json", body: JSON.stringify(transferNcco(transfer)) }),

  streamSurvivesTransfer: false,

  warm: vonageWarmTransfer
}
