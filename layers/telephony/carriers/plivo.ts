import { Effect, Option } from "effect"
import type { CallOutcome } from "../../../src/campaign/retryPolicy.ts"
import { isValidPlivoSignature } from "../../../src/telephony/plivoSignature.ts"
import { CallNotPlaced, type CarrierAccount, type CarrierAdapter, CarrierUnavailable } from "../../../services/Telephony.ts"
import type { OutboundHttp } from "../../../services/OutboundHttp.ts"
import { carrierRequest } from "./carrierRequest.ts"
import { formIncomingCall } from "./incomingCall.ts"
import { escapeXml } from "./xml.ts"

const PUBLIC_API = "https://api.plivo.com"

const authId = (account: CarrierAccount) => account.credentials.auth_id ?? ""

const headers = (account: CarrierAccount) => ({
  authorization: `Basic ${Buffer.from(`${authId(account)}:${account.credentials.auth_token ?? ""}`).toString("base64")}`,
  "content-type": "application/json"
})

const apiBase = (account: CarrierAccount) => account.apiBaseUrl ?? PUBLIC_API

const callPath = (account: CarrierAccount, id?: string) =>
  `/v1/Account/${encodeURIComponent(authId(account))}/Call/${id ? `${encodeURIComponent(id)}/` : ""}`

/** Plivo's hangup cause (or a machine verdict) as a campaign outcome. */
const outcomeOf = (fields: URLSearchParams | Record<string, any>): CallOutcome | null => {
  const get = (name: string) => (fields instanceof URLSearchParams ? fields.get(name) : fields[name]) ?? undefined
  const status = get("CallStatus") ?? get("call_status")
  const machine = get("Machine") === "true"
  switch (status) {
    case "completed":
      return machine ? "voicemail" : "completed"
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

export const plivoAdapter: CarrierAdapter<OutboundHttp> = {
  placeCall: (account, call) =>
    Effect.gen(function* () {
      const reply = yield* carrierRequest("Plivo", apiBase(account), callPath(account), {
        method: "POST",
        headers: headers(account),
        body: JSON.stringify({
          from: call.from.replace(/^\+/, ""),
          to: call.to.replace(/^\+/, ""),
          answer_url: call.answerUrl,
          answer_method: "POST",
          hangup_url: call.statusCallbackUrl,
          hangup_method: "POST",
          time_limit: call.timeLimitSeconds,
          ...(account.machineDetection ? { machine_detection: "true", machine_detection_url: call.statusCallbackUrl } : {})
        })
      }).pipe(Effect.mapError((error) => new CallNotPlaced({ message: error.message, permanent: false })))
      const id = reply.body.request_uuid
      if (reply.status >= 400 || typeof id !== "string") {
        return yield* new CallNotPlaced({
          message: `Plivo refused the call (HTTP ${reply.status})`,
          permanent: reply.status >= 400 && reply.status < 500 && reply.status !== 429
        })
      }
      return { providerCallId: id }
    }).pipe(Effect.withSpan("Plivo.placeCall")),

  hangUp: (account, providerCallId) =>
    carrierRequest("Plivo", apiBase(account), callPath(account, providerCallId), { method: "DELETE", headers: headers(account) }).pipe(
      Effect.flatMap((reply) =>
        reply.status < 300 || reply.status === 404
          ? Effect.void
          : Effect.fail(new CarrierUnavailable({ message: `Plivo did not hang up the call (HTTP ${reply.status})` }))
      ),
      Effect.withSpan("Plivo.hangUp")
    ),

  callStatus: (account, providerCallId) =>
    carrierRequest("Plivo", apiBase(account), callPath(account, providerCallId), { method: "GET", headers: headers(account) }).pipe(
      Effect.flatMap((reply) => {
        if (reply.status >= 300) {
          return Effect.fail(new CarrierUnavailable({ message: `Plivo did not report the call (HTTP ${reply.status})` }))
        }
        const duration = reply.body.call_duration ?? reply.body.bill_duration
        return Effect.succeed({
          providerCallId,
          outcome: outcomeOf(reply.body),
          durationSeconds: duration === undefined || duration === null ? null : Math.round(Number(duration)) || 0
        })
      }),
      Effect.withSpan("Plivo.callStatus")
    ),

  verifyWebhook: (account, webhook) =>
    isValidPlivoSignature(
      account.credentials.auth_token ?? "",
      webhook.url,
      new URLSearchParams(webhook.rawBody),
      webhook.headers["x-plivo-signature-v3-nonce"],
      webhook.headers["x-plivo-signature-v3"]
    ),

  parseStatusCallback: (webhook) => {
    const fields = new URLSearchParams(webhook.rawBody)
    // The call is the one placed when its callbacks carry the request_uuid the placement returned:
    // documented as ALegRequestUUID on answer and hangup requests for API calls
    // (plivo.com/docs/voice/xml/request), sent as RequestUUID by some; the CallUUID is Plivo's own.
    const id = fields.get("RequestUUID") ?? fields.get("ALegRequestUUID") ?? fields.get("CallUUID")
    if (!id) return Option.none()
    const duration = fields.get("Duration") ?? fields.get("BillDuration")
    return Option.some({
      providerCallId: id,
      outcome: outcomeOf(fields),
      durationSeconds: duration === null ? null : Math.round(Number(duration)) || 0,
      answered: fields.get("CallStatus") === "in-progress"
    })
  },

  parseIncomingCall: formIncomingCall("CallUUID"),

  answerMarkup: (streamUrl) => ({
    contentType: "text/xml",
    body: `<?xml version="1.0" encoding="UTF-8"?><Response><Stream bidirectional="true" keepCallAlive="true" contentType="audio/x-mulaw;rate=8000">${
      escapeXml(streamUrl)
    }</Stream></Response>`
  })
}
