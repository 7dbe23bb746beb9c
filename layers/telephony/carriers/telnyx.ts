import { Clock, Effect, Option } from "effect"
import type { OutboundHttp } from "../../../services/OutboundHttp.ts"
import { CallNotPlaced, type CarrierAdapter, CarrierUnavailable } from "../../../services/Telephony.ts"
import type { CallOutcome } from "../../../src/campaigns/retryPolicy.ts"
import { isValidTelnyxSignature } from "../../../src/telephony/telnyxSignature.ts"
import { carrierRequest, hungUp } from "./carrierRequest.ts"
import { formIncomingCall } from "./incomingCall.ts"
import { apiBase, headers, TelnyxCallReply, transferOutcomeOfHangup } from "./telnyxRest.ts"
import { telnyxWarmTransfer } from "./telnyxWarm.ts"
import { escapeXml } from "./xml.ts"

/**
 * Telnyx reports why a call hung up; that is the outcome. `time_limit` is the `time_limit_secs`
 * the call was dialled with running out: the call was answered and talked its full time.
 */
const outcomeOfHangup = (cause: string | undefined): CallOutcome => {
  switch (cause) {
    case "normal_clearing":
    case "time_limit":
      return "completed"
    case "user_busy":
      return "busy"
    case "timeout":
    case "no_answer":
      return "no-answer"
    case "originator_cancel":
      return "canceled"
    default:
      return "failed"
  }
}

export const telnyxAdapter: CarrierAdapter<OutboundHttp> = {
  placeCall: (account, call) =>
    Effect.gen(function*() {
      const reply = yield* carrierRequest("Telnyx", apiBase(account), "/v2/calls", {
        method: "POST",
        headers: headers(account),
        body: JSON.stringify({
          connection_id: account.credentials.connection_id,
          to: call.to,
          from: call.from,
          webhook_url: call.statusCallbackUrl,
          webhook_url_method: "POST",
          time_limit_secs: call.timeLimitSeconds,
          ...(call.mediaStreamUrl
            ? { stream_url: call.mediaStreamUrl, stream_track: "both_tracks", stream_bidirectional_mode: "rtp" }
            : {}),
          ...(account.machineDetection ? { answering_machine_detection: "detect" } : {})
        })
      }, TelnyxCallReply).pipe(
        Effect.mapError((error) => new CallNotPlaced({ message: error.message, permanent: false }))
      )
      const id = reply.body.data?.call_control_id
      if (reply.status >= 400 || typeof id !== "string") {
        return yield* new CallNotPlaced({
          message: `Telnyx refused the call (HTTP ${reply.status}${
            reply.body.errors?.[0]?.code ? `, code ${reply.body.errors[0].code}` : ""
          })`,
          permanent: reply.status >= 400 && reply.status < 500 && reply.status !== 429,
          callerIdRefused: reply.status >= 400 && reply.status < 500 &&
            (reply.body.errors ?? []).some((error) => error.source?.pointer === "/from")
        })
      }
      return { providerCallId: id }
    }).pipe(Effect.withSpan("Telnyx.placeCall")),

  hangUp: (account, { providerCallId }) =>
    carrierRequest("Telnyx", apiBase(account), `/v2/calls/${encodeURIComponent(providerCallId)}/actions/hangup`, {
      method: "POST",
      headers: headers(account),
      body: "{}"
    }, TelnyxCallReply).pipe(
      // 404 and 422: the call has already ended.
      Effect.flatMap(hungUp("Telnyx", [404, 422])),
      Effect.withSpan("Telnyx.hangUp")
    ),

  callStatus: (account, { providerCallId }) =>
    carrierRequest("Telnyx", apiBase(account), `/v2/calls/${encodeURIComponent(providerCallId)}`, {
      method: "GET",
      headers: headers(account)
    }, TelnyxCallReply).pipe(
      Effect.flatMap((reply) => {
        if (reply.status >= 300) {
          return Effect.fail(
            new CarrierUnavailable({ message: `Telnyx did not report the call (HTTP ${reply.status})` })
          )
        }
        // Telnyx only says whether the call is alive; one that ended unseen counts as failed.
        const alive = reply.body.data?.is_alive === true
        const duration = reply.body.data?.call_duration
        return Effect.succeed({
          providerCallId,
          outcome: alive ? null : "failed" as const,
          durationSeconds: typeof duration === "number" ? Math.round(duration) : null
        })
      }),
      Effect.withSpan("Telnyx.callStatus")
    ),

  verifyWebhook: (account, webhook) =>
    Effect.map(Clock.currentTimeMillis, (now) =>
      isValidTelnyxSignature(
        account.credentials.webhook_public_key,
        webhook.rawBody,
        webhook.headers["telnyx-timestamp"],
        webhook.headers["telnyx-signature-ed25519"],
        Math.floor(now / 1000)
      )),

  parseStatusCallback: (webhook) => {
    let event: Record<string, any>
    try {
      event = JSON.parse(webhook.rawBody || "{}")
    } catch {
      return Option.none()
    }
    const type = event.data?.event_type
    const payload = event.data?.payload ?? {}
    if (typeof payload.call_control_id !== "string") return Option.none()
    // Detection's verdict while the call goes on (answering_machine_detection "detect"); call.hangup ends it later.
    const result = type === "call.machine.detection.ended" && typeof payload.result === "string" ? payload.result : ""
    const answeredBy = result.startsWith("machine")
      ? "machine" as const
      : result.startsWith("human")
      ? "human" as const
      : null
    return Option.some({
      providerCallId: payload.call_control_id,
      outcome: type === "call.hangup" ? outcomeOfHangup(payload.hangup_cause) : null,
      durationSeconds: null,
      answered: type === "call.answered",
      ...(answeredBy === null ? {} : { answeredBy })
    })
  },

  // Inbound calls reach a TeXML application, which posts Twilio-style form fields.
  parseIncomingCall: formIncomingCall("CallSid"),

  answerMarkup: (streamUrl) => ({
    contentType: "text/xml",
    body: `<?xml version="1.0" encoding="UTF-8"?><Response><Connect><Stream url="${
      escapeXml(streamUrl)
    }" bidirectionalMode="rtp"/></Connect></Response>`
  }),

  transfer: (account, { providerCallId }, transfer) =>
    carrierRequest(
      "Telnyx",
      apiBase(account),
      `/v2/calls/${encodeURIComponent(providerCallId)}/actions/transfer`,
      {
        method: "POST",
        headers: headers(account),
        body: JSON.stringify({
          to: transfer.endpoint.kind === "number" ? transfer.endpoint.number : transfer.endpoint.uri,
          timeout_secs: transfer.timeoutSeconds,
          // The new leg's events (call.answered, call.bridged, call.hangup) come here.
          webhook_url: transfer.eventUrl,
          webhook_url_method: "POST"
        })
      },
      TelnyxCallReply
    ).pipe(
      Effect.flatMap((reply) =>
        reply.status >= 200 && reply.status < 300
          ? Effect.void
          : Effect.fail(
            new CarrierUnavailable({
              message: `Telnyx did not transfer the call (HTTP ${reply.status}${
                reply.body.errors?.[0]?.code ? `, code ${reply.body.errors[0].code}` : ""
              })`
            })
          )
      ),
      Effect.withSpan("Telnyx.transfer")
    ),

  parseTransferEvent: (webhook) => {
    let event: Record<string, any>
    try {
      event = JSON.parse(webhook.rawBody || "{}")
    } catch {
      return Option.none()
    }
    const type = event.data?.event_type
    if (type === "call.answered" || type === "call.bridged") return Option.some("answered")
    if (type === "call.hangup") return Option.some(transferOutcomeOfHangup(event.data?.payload?.hangup_cause))
    return Option.none()
  },

  transferEventReply: () => ({ contentType: "application/json", body: "{}" }),

  // The call never left the agent's stream.
  returnsAfterTransfer: false,

  // Telnyx takes the destination in the command itself; nothing is fetched.
  transferMarkup: () => ({ contentType: "application/json", body: "{}" }),

  streamSurvivesTransfer: true,

  warm: telnyxWarmTransfer
}
