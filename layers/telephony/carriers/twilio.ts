import { Effect, Option } from "effect"
import type { CallOutcome } from "../../../src/campaign/retryPolicy.ts"
import { isValidTwilioSignature } from "../../../src/telephony/twilioSignature.ts"
import {
  type CallStatus,
  CallNotPlaced,
  type CarrierAccount,
  type CarrierAdapter,
  CarrierUnavailable,
  type WebhookRequest
} from "../../../services/Telephony.ts"
import { formIncomingCall } from "./incomingCall.ts"
import { escapeXml } from "./xml.ts"

const PUBLIC_API = "https://api.twilio.com"
const REQUEST_TIMEOUT_MS = 10_000

const accountSid = (account: CarrierAccount) => account.credentials.account_sid ?? ""
const authToken = (account: CarrierAccount) => account.credentials.auth_token ?? ""

const callsUrl = (account: CarrierAccount, suffix = "") =>
  `${(account.apiBaseUrl ?? PUBLIC_API).replace(/\/+$/, "")}/2010-04-01/Accounts/${encodeURIComponent(accountSid(account))}/Calls${suffix}.json`

const request = (account: CarrierAccount, url: string, form?: URLSearchParams) =>
  Effect.tryPromise({
    try: (signal) =>
      fetch(url, {
        method: form ? "POST" : "GET",
        headers: {
          authorization: `Basic ${Buffer.from(`${accountSid(account)}:${authToken(account)}`).toString("base64")}`,
          ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {})
        },
        ...(form ? { body: form.toString() } : {}),
        signal: AbortSignal.any([signal, AbortSignal.timeout(REQUEST_TIMEOUT_MS)])
      }),
    catch: (error) => new CarrierUnavailable({ message: `Twilio could not be reached: ${(error as Error).name}` })
  })

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

export const twilioAdapter: CarrierAdapter = {
  placeCall: (account, call) =>
    Effect.gen(function* () {
      const form = new URLSearchParams({
        To: call.to,
        From: call.from,
        Url: call.answerUrl,
        Method: "POST",
        StatusCallback: call.statusCallbackUrl,
        StatusCallbackMethod: "POST",
        TimeLimit: String(call.timeLimitSeconds)
      })
      for (const event of ["initiated", "ringing", "answered", "completed"]) form.append("StatusCallbackEvent", event)
      if (account.machineDetection) form.set("MachineDetection", "Enable")
      const response = yield* request(account, callsUrl(account), form).pipe(
        Effect.mapError((error) => new CallNotPlaced({ message: error.message, permanent: false }))
      )
      const body = yield* Effect.promise(() => response.json().catch(() => ({}))) as Effect.Effect<Record<string, any>>
      if (response.status >= 400 || typeof body.sid !== "string") {
        // Twilio's own message may echo numbers and account details; keep only its status and code.
        const code = body.code ? `, code ${body.code}` : ""
        return yield* new CallNotPlaced({
          message: `Twilio refused the call (HTTP ${response.status}${code})`,
          permanent: response.status >= 400 && response.status < 500 && response.status !== 429
        })
      }
      return { providerCallId: body.sid }
    }).pipe(Effect.withSpan("Twilio.placeCall")),

  hangUp: (account, { providerCallId }) =>
    request(account, callsUrl(account, `/${encodeURIComponent(providerCallId)}`), new URLSearchParams({ Status: "completed" })).pipe(
      // 404: the call has already ended, which is what we wanted.
      Effect.flatMap((response) =>
        response.ok || response.status === 404
          ? Effect.void
          : Effect.fail(new CarrierUnavailable({ message: `Twilio did not hang up the call (HTTP ${response.status})` }))
      ),
      Effect.withSpan("Twilio.hangUp")
    ),

  callStatus: (account, { providerCallId }) =>
    Effect.gen(function* () {
      const response = yield* request(account, callsUrl(account, `/${encodeURIComponent(providerCallId)}`))
      if (!response.ok) {
        return yield* new CarrierUnavailable({ message: `Twilio did not report the call (HTTP ${response.status})` })
      }
      const body = (yield* Effect.promise(() => response.json().catch(() => ({})))) as Record<string, any>
      const status: CallStatus = {
        providerCallId,
        outcome: outcomeOf(body.status, body.answered_by ?? undefined),
        durationSeconds: durationOf(body.duration)
      }
      return status
    }).pipe(Effect.withSpan("Twilio.callStatus")),

  verifyWebhook: (account, webhook) =>
    isValidTwilioSignature(
      authToken(account),
      webhook.url,
      Object.fromEntries(new URLSearchParams(webhook.rawBody)),
      webhook.headers["x-twilio-signature"]
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
      ...(answeredBy === null || answeredBy === "unknown" ? {} : { answeredBy: answeredBy === "human" ? "human" as const : "machine" as const })
    })
  },

  parseIncomingCall: formIncomingCall("CallSid"),

  answerMarkup: (streamUrl) => ({
    contentType: "text/xml",
    body: `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${escapeXml(streamUrl)}"/></Connect></Response>`
  })
}
