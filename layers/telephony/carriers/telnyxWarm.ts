import { Effect, Option } from "effect"
import type { OutboundHttp } from "../../../services/OutboundHttp.ts"
import { type CarrierAccount, CarrierUnavailable, type WarmTransferAdapter } from "../../../services/Telephony.ts"
import { carrierRequest } from "./carrierRequest.ts"
import { apiBase, headers, TelnyxCallReply, transferOutcomeOfHangup } from "./telnyxRest.ts"

/** A Call Control command (developers.telnyx.com/api/call-control), refused unless Telnyx answers 2xx. */
const command = (account: CarrierAccount, path: string, body: Record<string, unknown>, what: string) =>
  carrierRequest("Telnyx", apiBase(account), path, {
    method: "POST",
    headers: headers(account),
    body: JSON.stringify(body)
  }, TelnyxCallReply).pipe(
    Effect.mapError((error) => new CarrierUnavailable({ message: error.message })),
    Effect.flatMap((reply) =>
      reply.status >= 200 && reply.status < 300
        ? Effect.succeed(reply.body)
        : Effect.fail(
          new CarrierUnavailable({
            message: `Telnyx did not ${what} (HTTP ${reply.status}${
              reply.body.errors?.[0]?.code ? `, code ${reply.body.errors[0].code}` : ""
            })`
          })
        )
    )
  )

const parsed = (rawBody: string): Record<string, any> | null => {
  try {
    return JSON.parse(rawBody || "{}")
  } catch {
    return null
  }
}

/**
 * Telnyx's warm transfer: the destination is a new call dialled on the same connection
 * (`timeout_secs` its ring time) whose events come to the transfer's URL; once `call.answered`
 * it is told the whisper (`speak`), and on `call.speak.ended` the caller's call is bridged to it
 * (`bridge`, which both calls must be answered for). The caller's own stream with the agent
 * never stopped while it rang; a `call.hangup` before the bridge says why it did not answer.
 */
export const telnyxWarmTransfer: WarmTransferAdapter<OutboundHttp> = {
  dial: (account, request) =>
    command(account, "/v2/calls", {
      connection_id: account.credentials.connection_id,
      to: request.endpoint.kind === "number" ? request.endpoint.number : request.endpoint.uri,
      from: request.from,
      timeout_secs: request.timeoutSeconds,
      webhook_url: request.eventUrl,
      webhook_url_method: "POST"
    }, "ring the transfer's destination").pipe(
      Effect.flatMap((body) =>
        typeof body.data?.call_control_id === "string"
          ? Effect.succeed({ legId: body.data.call_control_id })
          : Effect.fail(new CarrierUnavailable({ message: "Telnyx did not name the destination's call" }))
      ),
      Effect.withSpan("Telnyx.warmDial")
    ),

  parseEvent: (webhook) => {
    const event = parsed(webhook.rawBody)
    const type = event?.data?.event_type
    const legId = event?.data?.payload?.call_control_id
    if (typeof legId !== "string") return Option.none()
    switch (type) {
      case "call.answered":
        return Option.some({ _tag: "Answered", legId })
      case "call.speak.ended":
        return Option.some({ _tag: "Briefed", legId })
      case "call.hangup":
        return Option.some({
          _tag: "Ended",
          legId,
          outcome: transferOutcomeOfHangup(event?.data?.payload?.hangup_cause)
        })
      default:
        return Option.none()
    }
  },

  brief: (account, legId, request) =>
    command(
      account,
      `/v2/calls/${encodeURIComponent(legId)}/actions/speak`,
      { payload: request.whisper, voice: "female", language: "en-US" },
      "speak to the transfer's destination"
    ).pipe(Effect.asVoid, Effect.withSpan("Telnyx.warmBrief")),

  join: (account, caller, legId) =>
    command(
      account,
      `/v2/calls/${encodeURIComponent(caller.providerCallId)}/actions/bridge`,
      { call_control_id: legId },
      "bridge the caller to the destination"
    ).pipe(Effect.asVoid, Effect.withSpan("Telnyx.warmJoin")),

  eventReply: { contentType: "application/json", body: "{}" },

  // The leg's instructions go with the call itself.
  markup: null
}
