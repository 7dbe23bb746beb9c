import { Effect, Option } from "effect"
import type { OutboundHttp } from "../../../services/OutboundHttp.ts"
import {
  CallNotPlaced,
  type CarrierAdapter,
  type TransferOutcome,
  type TransferRequest
} from "../../../services/Telephony.ts"
import type { CallOutcome } from "../../../src/campaigns/retryPolicy.ts"
import { isValidPlivoSignature } from "../../../src/telephony/plivoSignature.ts"
import { carrierRequest } from "./carrierRequest.ts"
import { formIncomingCall } from "./incomingCall.ts"
import { accountPath, apiBase, callPath, headers, PlivoCallReply, unavailable } from "./plivoRest.ts"
import { plivoWarmTransfer } from "./plivoWarm.ts"
import { escapeXml } from "./xml.ts"

/** Plivo's refusals are a sentence in `error`; one naming the `from` number or caller ID is about ours. */
const refusesCallerId = (reply: { readonly status: number; readonly body: PlivoCallReply }) =>
  reply.status === 400 && typeof reply.body.error === "string" && /\bfrom\b|caller.?id/i.test(reply.body.error)

/**
 * The XML a transferred call's A leg runs (plivo.com/docs/voice/xml/dial): `<Dial>` rings a
 * `<Number>` (digits, no "+") or a SIP `<User>` for `timeout` seconds; `callbackUrl` is told when
 * the B leg answers (`DialAction=answer`), `action` gets `DialStatus` when the dial is over.
 */
const transferXml = (transfer: Omit<TransferRequest, "markupUrl">) => {
  const url = escapeXml(transfer.eventUrl)
  const noun = transfer.endpoint.kind === "number"
    ? `<Number>${escapeXml(transfer.endpoint.number.replace(/^\+/, ""))}</Number>`
    : `<User>${escapeXml(transfer.endpoint.uri)}</User>`
  return `<?xml version="1.0" encoding="UTF-8"?><Response><Dial timeout="${transfer.timeoutSeconds}" action="${url}" method="POST" callbackUrl="${url}" callbackMethod="POST">${noun}</Dial></Response>`
}

/** `DialStatus` (the Dial action's report) as a transfer outcome. */
const dialOutcome = (status: string): TransferOutcome => {
  switch (status) {
    case "completed":
    case "answer":
      return "answered"
    case "busy":
      return "busy"
    case "no-answer":
    case "timeout":
      return "no_answer"
    default:
      return "failed"
  }
}

/** Plivo's CallStatus as a campaign outcome; null while the call is live. */
const outcomeOf = (status: string | null | undefined): CallOutcome | null => {
  switch (status) {
    case "completed":
      return "completed"
    case "busy":
      return "busy"
    case "no-answer":
    case "timeout":
      return "no-answer"
    case "cancel":
    case "canceled":
      return "canceled"
    case "failed":
      return "failed"
    default:
      return null
  }
}

/**
 * How an ended call's record (GET …/Call/{call_uuid}/) says it went: answered calls completed;
 * the others by their hangup cause (plivo.com/docs/voice/troubleshooting/hangup-causes).
 */
const outcomeOfRecord = (record: PlivoCallReply): CallOutcome => {
  if (record.answer_time) return "completed"
  const cause = String(record.hangup_cause_name ?? "")
  if (cause.startsWith("Busy")) return "busy"
  if (cause === "No Answer" || cause.startsWith("Ring Timeout")) return "no-answer"
  if (cause.startsWith("Cancel")) return "canceled"
  return "failed"
}

const seconds = (
  value: unknown
) => (value === undefined || value === null || value === "" ? null : Math.round(Number(value)) || 0)

export const plivoAdapter: CarrierAdapter<OutboundHttp> = {
  placeCall: (account, call) =>
    Effect.gen(function*() {
      const reply = yield* carrierRequest("Plivo", apiBase(account), callPath(account), {
        method: "POST",
        headers: headers(account),
        body: JSON.stringify({
          from: call.from.replace(/^\+/, ""),
          to: call.to.replace(/^\+/, ""),
          answer_url: call.answerUrl,
          answer_method: "POST",
          // The ringing callback names the live call (its CallUUID) before anyone answers, so the call can be cancelled.
          ring_url: call.statusCallbackUrl,
          ring_method: "POST",
          hangup_url: call.statusCallbackUrl,
          hangup_method: "POST",
          time_limit: call.timeLimitSeconds,
          ...(account.machineDetection
            ? {
              machine_detection: "true",
              machine_detection_url: call.statusCallbackUrl,
              machine_detection_method: "POST"
            }
            : {})
        })
      }, PlivoCallReply).pipe(
        Effect.mapError((error) => new CallNotPlaced({ message: error.message, permanent: false }))
      )
      const id = reply.body.request_uuid
      if (reply.status >= 400 || typeof id !== "string") {
        return yield* new CallNotPlaced({
          message: `Plivo refused the call (HTTP ${reply.status})`,
          permanent: reply.status >= 400 && reply.status < 500 && reply.status !== 429,
          callerIdRefused: refusesCallerId(reply)
        })
      }
      return { providerCallId: id }
    }).pipe(Effect.withSpan("Plivo.placeCall")),

  // A live call is hung up by its CallUUID; the request UUID the placement answered names no call
  // there (a 404). Until a callback named the call, the request itself is cancelled.
  hangUp: (account, { providerCallId, liveCallId }) =>
    carrierRequest(
      "Plivo",
      apiBase(account),
      liveCallId === null
        ? `${accountPath(account)}/Request/${encodeURIComponent(providerCallId)}/`
        : callPath(account, liveCallId),
      { method: "DELETE", headers: headers(account) },
      PlivoCallReply
    ).pipe(
      // 404: no such call is live any more, which is what we wanted.
      Effect.flatMap((reply) => (reply.status < 300 || reply.status === 404
        ? Effect.void
        : Effect.fail(unavailable("hang up the call", reply.status)))
      ),
      Effect.withSpan("Plivo.hangUp")
    ),

  callStatus: (account, { providerCallId, liveCallId }) =>
    Effect.gen(function*() {
      const request = (path: string, query?: Record<string, string>) =>
        carrierRequest("Plivo", apiBase(account), path, {
          method: "GET",
          headers: headers(account),
          ...(query ? { query } : {})
        }, PlivoCallReply)
      if (liveCallId === null) {
        // Not yet ringing: only the request is known, queued or gone.
        const queued = yield* request(callPath(account, providerCallId), { status: "queued" })
        if (queued.status >= 300) return yield* unavailable("report the call", queued.status)
        return { providerCallId, outcome: null, durationSeconds: null }
      }
      const live = yield* request(callPath(account, liveCallId), { status: "live" })
      if (live.status < 300) {
        return {
          providerCallId,
          liveCallId,
          outcome: null,
          durationSeconds: null,
          answered: live.body.call_status === "in-progress"
        }
      }
      const record = yield* request(callPath(account, liveCallId))
      if (record.status >= 300) return yield* unavailable("report the call", record.status)
      return {
        providerCallId,
        liveCallId,
        outcome: outcomeOfRecord(record.body),
        durationSeconds: seconds(record.body.call_duration)
      }
    }).pipe(Effect.withSpan("Plivo.callStatus")),

  verifyWebhook: (account, webhook) =>
    Effect.sync(() =>
      isValidPlivoSignature(
        account.credentials.auth_token ?? "",
        webhook.url,
        new URLSearchParams(webhook.rawBody),
        webhook.headers["x-plivo-signature-v3-nonce"],
        webhook.headers["x-plivo-signature-v3"]
      )
    ),

  parseStatusCallback: (webhook) => {
    const fields = new URLSearchParams(webhook.rawBody)
    // The call is the one placed when its callbacks carry the request_uuid the placement returned:
    // documented as ALegRequestUUID on answer and hangup requests for API calls
    // (plivo.com/docs/voice/xml/request), and as RequestUUID on the machine-detection callback;
    // the CallUUID is the live call's own, which hanging up takes.
    const callUuid = fields.get("CallUUID")
    const id = fields.get("RequestUUID") ?? fields.get("ALegRequestUUID") ?? callUuid
    if (!id) return Option.none()
    const machine = fields.get("Machine")
    return Option.some({
      providerCallId: id,
      outcome: outcomeOf(fields.get("CallStatus")),
      durationSeconds: seconds(fields.get("Duration") ?? fields.get("BillDuration")),
      answered: fields.get("CallStatus") === "in-progress",
      ...(callUuid ? { liveCallId: callUuid } : {}),
      // Asynchronous detection (machine_detection_url): the call goes on; its hangup says completed.
      ...(machine === "true"
        ? { answeredBy: "machine" as const }
        : machine === "false"
        ? { answeredBy: "human" as const }
        : {})
    })
  },

  parseIncomingCall: formIncomingCall("CallUUID"),

  answerMarkup: (streamUrl) => ({
    contentType: "text/xml",
    body:
      `<?xml version="1.0" encoding="UTF-8"?><Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">${
        escapeXml(streamUrl)
      }</Stream></Response>`
  }),

  // Transfer a call (plivo.com/docs/voice/api/call/transfer-a-call): the A leg fetches `aleg_url`
  // and runs its XML in place of the `<Stream>` it was running.
  transfer: (account, { providerCallId, liveCallId }, transfer) =>
    carrierRequest("Plivo", apiBase(account), callPath(account, liveCallId ?? providerCallId), {
      method: "POST",
      headers: headers(account),
      body: JSON.stringify({ legs: "aleg", aleg_url: transfer.markupUrl, aleg_method: "POST" })
    }, PlivoCallReply).pipe(
      Effect.flatMap((reply) =>
        reply.status < 300 ? Effect.void : Effect.fail(unavailable("transfer the call", reply.status))
      ),
      Effect.withSpan("Plivo.transfer")
    ),

  parseTransferEvent: (webhook) => {
    const fields = new URLSearchParams(webhook.rawBody)
    const status = fields.get("DialStatus")
    if (status !== null) return Option.some(dialOutcome(status))
    return fields.get("DialAction") === "answer" ? Option.some("answered") : Option.none()
  },

  // Once the `<Dial>` is over the caller goes back to the agent's (new) stream, or the call ends.
  transferEventReply: (returnStreamUrl) =>
    returnStreamUrl === null
      ? { contentType: "text/xml", body: `<?xml version="1.0" encoding="UTF-8"?><Response><Hangup/></Response>` }
      : plivoAdapter.answerMarkup(returnStreamUrl),

  returnsAfterTransfer: true,

  transferMarkup: (transfer) => ({ contentType: "text/xml", body: transferXml(transfer) }),

  streamSurvivesTransfer: false,

  warm: plivoWarmTransfer
}
