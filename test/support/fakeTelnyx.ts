import * as crypto from "node:crypto"
import {
  type CarrierDialect,
  type EndStatus,
  type LoopbackCall,
  type RestReply,
  type StandInOptions,
  startCarrierServer
} from "./loopbackCarrier.ts"

/**
 * A loopback Telnyx Call Control API (developers.telnyx.com, Voice API v2), the one the product's
 * adapter dials through:
 * - `POST /v2/calls` (dial), `POST /v2/calls/{call_control_id}/actions/hangup`,
 *   `GET /v2/calls/{call_control_id}`, authenticated with `Authorization: Bearer <API key>`;
 * - dial takes `connection_id` (the Call Control application, which must exist), `to` and `from`
 *   in E.164 with `+`; `webhook_url` and `webhook_url_method`, `time_limit_secs` (at most 14400),
 *   `timeout_secs` (5–600), `stream_url` (ws/wss), `stream_track`, `stream_bidirectional_mode`
 *   (mp3|rtp) and `answering_machine_detection` from their documented values; anything else
 *   is a 422 with `errors[]`. The reply is `{data: {call_control_id, call_leg_id,
 *   call_session_id, is_alive, record_type: "call"}}`;
 * - hang-up answers `{data: {result: "ok"}}`, or 422 (90018) once the call has ended;
 * - webhooks are `{data: {record_type: "event", id, event_type, occurred_at, payload}, meta}`:
 *   `call.initiated`, `call.answered`, `call.machine.detection.ended` (`result` human|machine,
 *   the call goes on), `call.hangup` with `hangup_cause` (normal_clearing, user_busy, timeout,
 *   originator_cancel, time_limit, call_rejected) and `hangup_source`; each signed with Ed25519
 *   over `${telnyx-timestamp}|${body}` in `telnyx-signature-ed25519`, as Telnyx signs them;
 * - the media stream is opened to the dial's `stream_url` once the call is answered;
 * - `POST /v2/calls/{call_control_id}/actions/transfer` (developers.telnyx.com/api/call-control/transfer-call)
 *   takes `to` (E.164 or a SIP URI), `timeout_secs` (5–600, default 30) and `webhook_url` for the
 *   new leg's events; a call that has ended answers 422 (90018). The new leg reports
 *   `call.initiated`, then `call.answered` and `call.bridged`, or `call.hangup` (`user_busy`,
 *   `timeout`, `call_rejected`): a failed transfer leaves the original call and its stream up;
 * - `…/actions/speak` (payload and voice, language for the basic voices) says text to an answered
 *   call, then `call.speak.ended`; `…/actions/bridge` (`call_control_id`) joins two answered calls;
 * - a dial's `to` may be a SIP URI; a number scripted as a transfer destination is a person who
 *   answers (or not) and stays on the line until hung up or bridged.
 */

interface TelnyxExtra {
  readonly callLegId: string
  readonly callSessionId: string
  readonly connectionId: string
  readonly webhookUrl: string
  readonly dialStreamUrl: string | null
}

type FakeTelnyxCall = LoopbackCall & TelnyxExtra

const json = (status: number, body: unknown): RestReply => ({ status, body })

type Engine = Parameters<CarrierDialect<TelnyxExtra>["rest"]>[1]

/** How long the loopback takes to say a `speak` payload (time is compressed). */
const SPEAK_MS = 40

const invalid = (field: string, detail: string) =>
  json(422, {
    errors: [{ code: "10015", title: "Invalid value for parameter", detail, source: { pointer: `/${field}` } }]
  })

const E164 = /^\+[1-9]\d{6,14}$/
const SIP_URI = /^sips?:[^@\s]+@\S+$/

const AMD_MODES = ["premium", "detect", "detect_beep", "detect_words", "greeting_end", "disabled"]

const hangupCause = (call: LoopbackCall): string => {
  if (call.endedBy === "time-limit") return "time_limit"
  const causes: Record<EndStatus, string> = {
    completed: "normal_clearing",
    busy: "user_busy",
    "no-answer": "timeout",
    canceled: "originator_cancel",
    failed: "call_rejected"
  }
  return causes[call.status as EndStatus]
}

export const startFakeTelnyx = async (options: StandInOptions = {}) => {
  const apiKey = `KEY${crypto.randomBytes(16).toString("hex").toUpperCase()}`
  const connectionId = String(crypto.randomInt(1e13, 2e14))
  const keys = crypto.generateKeyPairSync("ed25519")
  /** As the portal shows it: the raw 32-byte key in base64. */
  const publicKey = keys.publicKey.export({ format: "der", type: "spki" }).subarray(-32).toString("base64")

  const signed = (payload: Record<string, unknown>) => {
    const body = JSON.stringify(payload)
    const timestamp = String(Math.floor(Date.now() / 1000))
    return {
      method: "POST",
      headers: {
        "content-type": "application/json",
        "telnyx-timestamp": timestamp,
        "telnyx-signature-ed25519": crypto.sign(null, Buffer.from(`${timestamp}|${body}`), keys.privateKey).toString(
          "base64"
        )
      },
      body
    }
  }

  const resource = (call: FakeTelnyxCall) => ({
    record_type: "call",
    call_control_id: call.id,
    call_leg_id: call.callLegId,
    call_session_id: call.callSessionId,
    is_alive: call.endedAt === null,
    ...(call.endedAt === null
      ? {}
      : { call_duration: call.answeredAt === null ? 0 : Math.round((call.endedAt - call.answeredAt) / 1000) }),
    start_time: new Date(call.createdAt).toISOString(),
    ...(call.endedAt === null ? {} : { end_time: new Date(call.endedAt).toISOString() })
  })

  /** Each transfer's new leg: its id and where its events go. */
  const legs = new Map<string, { readonly callControlId: string; readonly webhookUrl: string }>()

  const transferCauses = { busy: "user_busy", "no-answer": "timeout", failed: "call_rejected" } as const

  /** A call's own event (not a transfer leg's), signed, to the webhook_url it was dialled with. */
  const callEvent = (
    call: FakeTelnyxCall,
    engine: Engine,
    eventType: string,
    payload: Record<string, unknown> = {}
  ) =>
    call.webhookUrl === "" ? Promise.resolve() : engine.deliver(
      call.webhookUrl,
      signed({
        data: {
          record_type: "event",
          id: crypto.randomUUID(),
          event_type: eventType,
          occurred_at: new Date().toISOString(),
          payload: {
            call_control_id: call.id,
            call_leg_id: call.callLegId,
            call_session_id: call.callSessionId,
            connection_id: call.connectionId,
            client_state: null,
            ...payload
          }
        },
        meta: { attempt: 1, delivered_to: call.webhookUrl }
      })
    ).then(() => undefined)

  /**
   * Speak text (developers.telnyx.com/api-reference/call-commands/speak-text): `payload` and
   * `voice` are required, `language` too for the basic voices (male, female); the call must be
   * answered. The speech is queued, then `call.speak.started` and `call.speak.ended` are sent.
   */
  const speak = (call: FakeTelnyxCall, body: Record<string, any>, engine: Engine): RestReply => {
    if (call.status !== "in-progress") return json(422, { errors: [{ code: "90018", title: "Call is not answered" }] })
    if (typeof body.payload !== "string" || body.payload.trim() === "") {
      return invalid("payload", "payload is required")
    }
    if (typeof body.voice !== "string" || body.voice === "") return invalid("voice", "voice is required")
    if ((body.voice === "male" || body.voice === "female") && typeof body.language !== "string") {
      return invalid("language", "language is required for the basic voices")
    }
    call.heard.push(body.payload)
    void callEvent(call, engine, "call.speak.started")
      .then(() => new Promise((resolve) => setTimeout(resolve, SPEAK_MS)))
      .then(() =>
        call.endedAt === null ? callEvent(call, engine, "call.speak.ended", { status: "completed" }) : undefined
      )
    return json(200, { data: { result: "ok" } })
  }

  /**
   * Bridge calls (developers.telnyx.com/api-reference/call-commands/bridge-calls): `call_control_id`
   * names the other call; both must be alive and answered. Each call hears `call.bridged`.
   */
  const bridge = (call: FakeTelnyxCall, body: Record<string, any>, engine: Engine): RestReply => {
    if (typeof body.call_control_id !== "string") return invalid("call_control_id", "call_control_id is required")
    const other = engine.find(body.call_control_id)
    if (other === undefined) return invalid("call_control_id", "The call to bridge with does not exist")
    if (call.status !== "in-progress" || other.status !== "in-progress") {
      return json(422, { errors: [{ code: "90018", title: "Both calls must be answered and active" }] })
    }
    const room = `bridge:${call.id}`
    engine.enterRoom(room, call, { endsStream: false })
    engine.enterRoom(room, other, { endsStream: false })
    void callEvent(call, engine, "call.bridged", { state: "bridged" })
    void callEvent(other, engine, "call.bridged", { state: "bridged" })
    return json(200, { data: { result: "ok" } })
  }

  const dialect: CarrierDialect<TelnyxExtra> = {
    provider: "telnyx",
    // "Retries webhook delivery" (count not documented): once, as the least of the others. Telnyx
    // documents no time limit for an answer to a webhook, so none is enforced (no responseLimits).
    connectionRetries: 1,

    rest: async (request, engine) => {
      if (request.headers.authorization !== `Bearer ${apiKey}`) {
        return json(401, {
          errors: [{ code: "10009", title: "Authentication failed", detail: "The API key is missing or invalid." }]
        })
      }
      if (request.method === "POST" && request.url.pathname === "/v2/calls") {
        let body: Record<string, any>
        try {
          body = JSON.parse(request.body)
        } catch {
          return json(400, { errors: [{ code: "10002", title: "Malformed JSON" }] })
        }
        if (typeof body.connection_id !== "string" || body.connection_id === "") {
          return invalid("connection_id", "connection_id is required")
        }
        if (body.connection_id !== connectionId) {
          return invalid("connection_id", "The connection does not exist or is not a Call Control application")
        }
        if (typeof body.to !== "string" || !(E164.test(body.to) || SIP_URI.test(body.to))) {
          return invalid("to", "to must be a number in E.164 format or a SIP URI")
        }
        if (typeof body.from !== "string" || !E164.test(body.from)) {
          return invalid("from", "from must be a number in E.164 format")
        }
        if (body.webhook_url !== undefined && !/^https?:\/\//.test(String(body.webhook_url))) {
          return invalid("webhook_url", "webhook_url must be a URL")
        }
        if (
          body.webhook_url_method !== undefined && body.webhook_url_method !== "POST" &&
          body.webhook_url_method !== "GET"
        ) {
          return invalid("webhook_url_method", "webhook_url_method must be POST or GET")
        }
        if (
          body.time_limit_secs !== undefined &&
          !(Number.isInteger(body.time_limit_secs) && body.time_limit_secs >= 1 && body.time_limit_secs <= 14400)
        ) {
          return invalid("time_limit_secs", "time_limit_secs must be an integer of at most 14400")
        }
        if (
          body.timeout_secs !== undefined &&
          !(Number.isInteger(body.timeout_secs) && body.timeout_secs >= 5 && body.timeout_secs <= 600)
        ) {
          return invalid("timeout_secs", "timeout_secs must be an integer from 5 to 600")
        }
        if (body.stream_url !== undefined && !/^wss?:\/\//.test(String(body.stream_url))) {
          return invalid("stream_url", "stream_url must be a WebSocket URL")
        }
        if (
          body.stream_track !== undefined &&
          !["inbound_track", "outbound_track", "both_tracks"].includes(body.stream_track)
        ) {
          return invalid("stream_track", "stream_track must be inbound_track, outbound_track or both_tracks")
        }
        if (body.stream_bidirectional_mode !== undefined && !["mp3", "rtp"].includes(body.stream_bidirectional_mode)) {
          return invalid("stream_bidirectional_mode", "stream_bidirectional_mode must be mp3 or rtp")
        }
        if (body.answering_machine_detection !== undefined && !AMD_MODES.includes(body.answering_machine_detection)) {
          return invalid(
            "answering_machine_detection",
            `answering_machine_detection must be one of ${AMD_MODES.join(", ")}`
          )
        }
        if (engine.refusesCallerId(body.from)) {
          return invalid("from", "The caller ID is not a number of this account or a verified number")
        }
        const rejection = engine.takeRejection()
        if (rejection) return json(rejection.status, { errors: [{ code: rejection.code, title: "Call rejected" }] })
        const call = engine.place({
          id: `v3:${crypto.randomBytes(24).toString("base64url")}`,
          to: body.to,
          from: body.from,
          machineDetection: body.answering_machine_detection !== undefined &&
            body.answering_machine_detection !== "disabled",
          timeLimitSeconds: body.time_limit_secs ?? 14400,
          extra: {
            callLegId: crypto.randomUUID(),
            callSessionId: crypto.randomUUID(),
            connectionId,
            webhookUrl: body.webhook_url ?? "",
            dialStreamUrl: body.stream_url ?? null
          }
        })
        await engine.replyDelay(call)
        return json(200, { data: { ...resource(call), is_alive: false } })
      }
      const match = /^\/v2\/calls\/([^/]+)(\/actions\/(?:hangup|transfer|speak|bridge))?$/.exec(request.url.pathname)
      const call = match ? engine.find(decodeURIComponent(match[1]!)) : undefined
      if (!call) {
        return json(404, { errors: [{ code: "10005", title: "Resource not found", detail: "Call not found" }] })
      }
      if (request.method === "GET" && !match![2]) return json(200, { data: resource(call) })
      if (request.method === "POST" && match![2] === "/actions/transfer") {
        if (call.endedAt !== null) return json(422, { errors: [{ code: "90018", title: "Call has already ended" }] })
        let body: Record<string, any>
        try {
          body = JSON.parse(request.body || "{}")
        } catch {
          return json(400, { errors: [{ code: "10002", title: "Malformed JSON" }] })
        }
        if (typeof body.to !== "string" || !(E164.test(body.to) || SIP_URI.test(body.to))) {
          return invalid("to", "to must be a number in E.164 format or a SIP URI")
        }
        if (
          body.timeout_secs !== undefined &&
          !(Number.isInteger(body.timeout_secs) && body.timeout_secs >= 5 && body.timeout_secs <= 600)
        ) {
          return invalid("timeout_secs", "timeout_secs must be an integer from 5 to 600")
        }
        if (body.webhook_url !== undefined && !/^https?:\/\//.test(String(body.webhook_url))) {
          return invalid("webhook_url", "webhook_url must be a URL")
        }
        legs.set(call.id, {
          callControlId: `v3:${crypto.randomBytes(24).toString("base64url")}`,
          webhookUrl: body.webhook_url ?? call.webhookUrl
        })
        engine.transfer(call, { destination: body.to, timeoutSeconds: body.timeout_secs ?? 30, endsStream: false })
        return json(200, { data: { result: "ok" } })
      }
      if (request.method === "POST" && (match![2] === "/actions/speak" || match![2] === "/actions/bridge")) {
        if (call.endedAt !== null) return json(422, { errors: [{ code: "90018", title: "Call has already ended" }] })
        let body: Record<string, any>
        try {
          body = JSON.parse(request.body || "{}")
        } catch {
          return json(400, { errors: [{ code: "10002", title: "Malformed JSON" }] })
        }
        return match![2] === "/actions/speak" ? speak(call, body, engine) : bridge(call, body, engine)
      }
      if (request.method === "POST" && match![2]) {
        if (call.endedAt !== null) return json(422, { errors: [{ code: "90018", title: "Call has already ended" }] })
        engine.hangUp(call)
        return json(200, { data: { result: "ok" } })
      }
      return json(405, { errors: [{ code: "10006", title: "Method not allowed" }] })
    },

    report: async (call, step, engine) => {
      if (call.webhookUrl === "") return
      const event = (eventType: string, payload: Record<string, unknown> = {}) =>
        callEvent(call, engine, eventType, { from: call.from, to: call.to, direction: "outgoing", ...payload })
      if (step === "initiated") await event("call.initiated", { state: "bridging" })
      if (step === "answered") {
        await event("call.answered", { state: "answered", start_time: new Date(call.answeredAt!).toISOString() })
      }
      if (step === "machine-verdict" && call.answeredBy !== null) {
        await event("call.machine.detection.ended", { result: call.answeredBy })
      }
      if (step === "ended") {
        await event("call.hangup", {
          state: "hangup",
          hangup_cause: hangupCause(call),
          hangup_source: call.endedBy === "api" ? "caller" : call.endedBy === "far-end" ? "callee" : "unknown",
          sip_hangup_cause: call.status === "busy" ? "486" : call.status === "completed" ? "200" : "unspecified",
          start_time: new Date(call.createdAt).toISOString(),
          end_time: new Date(call.endedAt!).toISOString()
        })
      }
    },

    // Call Control has no answer document: the stream asked for at dial time opens on answer.
    answer: async (call) => (call.dialStreamUrl === null ? null : { url: call.dialStreamUrl, parameters: {} }),

    media: (call) => ({ accountId: call.connectionId }),

    transferReport: async (call, transfer, step, engine) => {
      const leg = legs.get(call.id)!
      const event = (eventType: string, payload: Record<string, unknown> = {}) =>
        leg.webhookUrl === "" ? Promise.resolve() : engine.deliver(
          leg.webhookUrl,
          signed({
            data: {
              record_type: "event",
              id: crypto.randomUUID(),
              event_type: eventType,
              occurred_at: new Date().toISOString(),
              payload: {
                call_control_id: leg.callControlId,
                call_session_id: call.callSessionId,
                connection_id: call.connectionId,
                from: call.from,
                to: transfer.destination,
                direction: "outgoing",
                ...payload
              }
            },
            meta: { attempt: 1, delivered_to: leg.webhookUrl }
          })
        ).then(() => undefined)
      if (step === "answered") {
        await event("call.initiated", { state: "bridging" })
        await event("call.answered", { state: "answered" })
        await event("call.bridged", { state: "bridged" })
        return "continues"
      }
      if (transfer.result === "answered") {
        await event("call.hangup", { state: "hangup", hangup_cause: "normal_clearing", hangup_source: "callee" })
        return "ends"
      }
      await event("call.initiated", { state: "bridging" })
      await event("call.hangup", {
        state: "hangup",
        hangup_cause: transferCauses[transfer.result!],
        hangup_source: "callee"
      })
      // The original call stays up and may be given other commands.
      return "continues"
    }
  }

  const carrier = await startCarrierServer(dialect, options)
  return {
    ...carrier,
    apiKey,
    connectionId,
    publicKey,
    calls: () => carrier.calls() as ReadonlyArray<FakeTelnyxCall>,
    rejectNextCalls: (count: number, status = 422, code = "90015") => carrier.rejectNextCalls(count, status, code),
    /** The `config` of a telephony configuration pointing at this carrier. */
    telephonyConfig: (settings: { readonly machineDetection?: boolean } = {}) => ({
      provider: "telnyx",
      api_key: apiKey,
      connection_id: connectionId,
      webhook_public_key: publicKey,
      amd_enabled: settings.machineDetection ?? false,
      api_base_url: carrier.url
    })
  }
}
