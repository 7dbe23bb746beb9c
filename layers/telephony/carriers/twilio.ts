import { Effect, Option } from "effect"
import type { OutboundHttp } from "../../../services/OutboundHttp.ts"
import {
  CallNotPlaced,
  type CallStatus,
  type CarrierAdapter,
  CarrierUnavailable,
  type TransferOutcome,
  type TransferRequest,
  type WebhookRequest
} from "../../../services/Telephony.ts"
import type { CallOutcome } from "../../../src/campaigns/retryPolicy.ts"
import { isValidTwilioSignature } from "../../../src/telephony/twilioSignature.ts"
import { hungUp } from "./carrierRequest.ts"
import { formIncomingCall } from "./incomingCall.ts"
import { authToken, CALLER_ID_CODES, callsPath, twilioRequest } from "./twilioRest.ts"
import { twilioWarmTransfer } from "./twilioWarm.ts"
import { escapeXml } from "./xml.ts"

/** Twilio's status (plus AMD's verdict) as the outcome campaigns reason about; null while the call is live. */
const outcomeOf = (status: string | undefined, answeredBy: string | undefined): CallOutcome | null => {
  switch (status) {
    case "completed":
      return answeredBy?.startsWith("machine") || answeredBy === "fax" ? "voicemail" : "completed"
    case "busy":
    case "no-answer":
    case "failed":
    case "canceled":
      return status
    default:
      return null
  }
}

const durationOf = (value: string | number | null | undefined) => {
  const seconds = Number(value)
  return value === undefined || value === null || value === "" || !Number.isFinite(seconds) ? null : Math.round(seconds)
}

/**
 * The TwiML a live call is updated with to transfer it: `<Dial>` rings the destination for
 * `timeout` seconds and bridges it; its `action` is requested with `DialCallStatus` when the dial
 * is over (twilio.com/docs/voice/twiml/dial#action). The `<Number>`'s (or `<Sip>`'s) status
 * callback says at once when the destination answers, rather than after the bridged call ends.
 */
const transferTwiml = (request: Omit<TransferRequest, "markupUrl">) => {
  const url = escapeXml(request.eventUrl)
  const callback = `statusCallbackEvent="answered" statusCallback="${url}" statusCallbackMethod="POST"`
  const noun = request.endpoint.kind === "number"
    ? `<Number ${callback}>${escapeXml(request.endpoint.number)}</Number>`
    : `<Sip ${callback}>${escapeXml(request.endpoint.uri)}</Sip>`
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Dial timeout="${request.timeoutSeconds}" action="${url}" method="POST">${noun}</Dial></Response>`
}

/** `DialCallStatus` (the `<Dial>` action's report) as a transfer outcome. */
const dialOutcome = (status: string): TransferOutcome => {
  switch (status) {
    case "completed":
    case "answered":
      return "answered"
    case "busy":
      return "busy"
    case "no-answer":
      return "no_answer"
    default:
      return "failed"
  }
}

export const twilioAdapter: CarrierAdapter<OutboundHttp> = {
  placeCall: (account, call) =>
    Effect.gen(function*() {
      const form = new URLSearchParams({
        To: call.to,
        From: call.from,
        Url: call.answerUrl,
        Method: "POST",
        StatusCallback: call.statusCallbackUrl,
        StatusCallbackMethod: "POST",
        TimeLimit: String(call.timeLimitSeconds)
      })
      // Only the end: the answer document already names the call and carries AMD's verdict (MachineDetection
      // Enable decides before it is fetched), so initiated/ringing/answered callbacks would only cost requests.
      form.append("StatusCallbackEvent", "completed")
      if (account.machineDetection) form.set("MachineDetection", "Enable")
      const { status, body } = yield* twilioRequest(account, callsPath(account), form).pipe(
        Effect.mapError((error) => new CallNotPlaced({ message: error.message, permanent: false }))
      )
      if (status >= 400 || typeof body.sid !== "string") {
        // Twilio's own message may echo numbers and account details; keep only its status and code.
        const code = body.code ? `, code ${body.code}` : ""
        return yield* new CallNotPlaced({
          message: `Twilio refused the call (HTTP ${status}${code})`,
          permanent: status >= 400 && status < 500 && status !== 429,
          callerIdRefused: CALLER_ID_CODES.has(String(body.code))
        })
      }
      return { providerCallId: body.sid }
    }).pipe(Effect.withSpan("Twilio.placeCall")),

  hangUp: (account, { providerCallId }) =>
    twilioRequest(
      account,
      callsPath(account, `/${encodeURIComponent(providerCallId)}`),
      new URLSearchParams({ Status: "completed" })
    ).pipe(
      // 404: the call has already ended.
      Effect.flatMap(hungUp("Twilio", [404])),
      Effect.withSpan("Twilio.hangUp")
    ),

  callStatus: (account, { providerCallId }) =>
    Effect.gen(function*() {
      const { status: httpStatus, body } = yield* twilioRequest(
        account,
        callsPath(account, `/${encodeURIComponent(providerCallId)}`)
      )
      if (httpStatus < 200 || httpStatus >= 300) {
        return yield* new CarrierUnavailable({ message: `Twilio did not report the call (HTTP ${httpStatus})` })
      }
      const status: CallStatus = {
        providerCallId,
        outcome: outcomeOf(typeof body.status === "string" ? body.status : undefined, body.answered_by ?? undefined),
        durationSeconds: durationOf(body.duration)
      }
      return status
    }).pipe(Effect.withSpan("Twilio.callStatus")),

  verifyWebhook: (account, webhook) =>
    Effect.sync(() =>
      isValidTwilioSignature(
        authToken(account),
        webhook.url,
        Object.fromEntries(new URLSearchParams(webhook.rawBody)),
        webhook.headers["x-twilio-signature"]
      )
    ),

  parseStatusCallback: (webhook: WebhookRequest) => {
    const params = new URLSearchParams(webhook.rawBody)
    const providerCallId = params.get("CallSid")
    if (!providerCallId) return Option.none()
    const answeredBy = params.get("AnsweredBy")
    return Option.some({
      providerCallId,
      outcome: outcomeOf(params.get("CallStatus") ?? undefined, answeredBy ?? undefined),
      durationSeconds: durationOf(params.get("CallDuration")),
      answered: params.get("CallStatus") === "in-progress",
      ...(answeredBy === null || answeredBy === "unknown"
        ? {}
        : { answeredBy: answeredBy === "human" ? "human" as const : "machine" as const })
    })
  },

  parseIncomingCall: formIncomingCall("CallSid"),

  answerMarkup: (streamUrl) => ({
    contentType: "text/xml",
    body: `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${
      escapeXml(streamUrl)
    }"/></Connect></Response>`
  }),

  // Updating a live call with new TwiML (twilio.com/docs/voice/api/call-resource#update-a-call-resource)
  // ends the `<Connect><Stream>` it was running and runs the `<Dial>`.
  transfer: (account, { providerCallId }, transfer) =>
    twilioRequest(
      account,
      callsPath(account, `/${encodeURIComponent(providerCallId)}`),
      new URLSearchParams({ Twiml: transferTwiml(transfer) })
    ).pipe(
      Effect.flatMap((reply) =>
        reply.status >= 200 && reply.status < 300
          ? Effect.void
          : Effect.fail(
            new CarrierUnavailable({
              message: `Twilio did not transfer the call (HTTP ${reply.status}${
                reply.body.code ? `, code ${reply.body.code}` : ""
              })`
            })
          )
      ),
      Effect.withSpan("Twilio.transfer")
    ),

  parseTransferEvent: (webhook) => {
    const params = new URLSearchParams(webhook.rawBody)
    const dialed = params.get("DialCallStatus")
    if (dialed !== null) return Option.some(dialOutcome(dialed))
    // The destination leg's own status callback: answered is all it is asked to report.
    return params.get("CallStatus") === "in-progress" ? Option.some("answered") : Option.none()
  },

  // Once the `<Dial>` is over the caller goes back to the agent's (new) stream, or the call ends.
  transferEventReply: (returnStreamUrl) =>
    returnStreamUrl === null
      ? { contentType: "text/xml", body: `<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>` }
      : twilioAdapter.answerMarkup(returnStreamUrl),

  returnsAfterTransfer: true,

  transferMarkup: (transfer) => ({ contentType: "text/xml", body: transferTwiml(transfer) }),

  streamSurvivesTransfer: false,

  warm: twilioWarmTransfer
}
