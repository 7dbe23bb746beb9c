import * as crypto from "node:crypto"
import { type ConferenceMarkup, plivoConferenceMarkup } from "./conferenceMarkup.ts"
import { type DialMarkup, dialMarkup, endsTheCall } from "./dialMarkup.ts"
import {
  type CarrierDialect,
  type EndStatus,
  type LoopbackCall,
  type RestReply,
  type StandInOptions,
  startCarrierServer,
  type StreamTarget
} from "./loopbackCarrier.ts"

/**
 * A loopback Plivo Voice API (plivo.com/docs/voice/api/call):
 * - `POST /v1/Account/{auth_id}/Call/` with HTTP Basic `auth_id:auth_token`; `from`, `to` and
 *   `answer_url` required, `answer_method`, `ring_url`, `hangup_url`, `time_limit` (> 0),
 *   `machine_detection` (true|hangup) with `machine_detection_url`; 201 `{api_id, message:
 *   "call fired", request_uuid}`. The request UUID names the request, not the call: the live call
 *   gets its own `CallUUID`, sent with every callback;
 * - `DELETE …/Call/{call_uuid}/` hangs up a call by its CallUUID (204; 404 for anything else,
 *   a request UUID included); `DELETE …/Request/{request_uuid}/` cancels a call not yet answered;
 *   `GET …/Call/{call_uuid}/?status=live` describes a live call, `GET …/Call/{call_uuid}/` the
 *   record of an ended one;
 * - callbacks are form posts signed with X-Plivo-Signature-V3 and its nonce: ring_url
 *   (`ringing`), answer_url (`in-progress`), machine_detection_url (`Machine`, the call goes
 *   on), hangup_url (`completed`, `busy`, `no-answer`, `cancel`, `failed`, with `HangupCause`,
 *   `Duration`, `BillDuration`), each with `CallUUID`, `ALegUUID` and `ALegRequestUUID` (the
 *   machine-detection callback `RequestUUID`);
 * - the answer XML's `<Stream>`: its text is the URL, `bidirectional="true"`, `contentType` one
 *   of audio/x-l16;rate=8000|16000 or audio/x-mulaw;rate=8000 (this stand-in streams μ-law),
 *   `extraHeaders`; without `keepCallAlive="true"` the call goes on to the next element, and with
 *   none left it hangs up at once;
 * - `POST …/Call/{call_uuid}/` transfers a live call (plivo.com/docs/voice/api/call/transfer-a-call):
 *   `legs` aleg|bleg|both (default aleg), `aleg_url` required for the A leg, `aleg_method`; 202
 *   `{message: "call transferred"}`, 404 for a call that is not live. The A leg then fetches
 *   `aleg_url` (signed, like the answer) and runs its XML in place of the `<Stream>`, which ends: a
 *   `<Dial>` rings its `<Number>` or SIP `<User>` for `timeout` seconds; its `callbackUrl` hears
 *   `DialAction=answer` and its `action` gets `DialStatus` (completed, busy, no-answer, failed) once
 *   the dial is over, answering the XML the call runs next (a `<Stream>` connects the caller to a
 *   new stream, `<Hangup/>` or nothing ends the call);
 * - `ring_timeout` (> 0) is how long a placed call rings; a number scripted as a transfer's
 *   destination is a person who answers (or not) and stays on the line;
 * - an answer or `aleg_url` XML with a `<Conference>` speaks its `<Speak>` to the call, then puts
 *   it in the conference (the `<Stream>` it replaces ends); the element's `callbackUrl` hears
 *   `ConferenceAction=enter` with the call's `CallUUID`.
 */

interface PlivoExtra {
  readonly answerUrl: string
  readonly answerMethod: string
  readonly ringUrl: string | null
  readonly hangupUrl: string | null
  readonly machineDetectionUrl: string | null
}

type FakePlivoCall = LoopbackCall & PlivoExtra

const json = (status: number, body?: unknown): RestReply => (body === undefined ? { status } : { status, body })
const apiId = () => crypto.randomUUID()
const error = (status: number, message: string) => json(status, { api_id: apiId(), error: message })

/** The V3 signature (X-Plivo-Signature-V3): HMAC-SHA256 of the signing string, "." and the nonce. */
const v3Signature = (authToken: string, url: string, params: URLSearchParams, nonce: string) => {
  const parsed = new URL(url)
  const sorted = (separator: string) =>
    [...new Set(params.keys())].sort().flatMap((key) =>
      params.getAll(key).sort().map((value) => `${key}${separator}${value}`)
    )
  const query = [...new Set(parsed.searchParams.keys())].sort().flatMap((key) =>
    parsed.searchParams.getAll(key).sort().map((value) => `${key}=${value}`)
  ).join("&")
  const hasParams = [...params.keys()].length > 0
  // The URL without its query, then "?" and the sorted query, "." between it and the POST
  // parameters, which follow sorted as key and value with nothing between them.
  const signing = `${parsed.protocol}//${parsed.host}${parsed.pathname}${query !== "" || hasParams ? `?${query}` : ""}${
    query !== "" && hasParams ? "." : ""
  }${sorted("").join("")}`
  return crypto.createHmac("sha256", authToken).update(`${signing}.${nonce}`).digest("base64")
}

const attributes = (tag: string) => {
  const found: Record<string, string> = {}
  for (const [, name, value] of tag.matchAll(/([\w:-]+)\s*=\s*"([^"]*)"/g)) {
    found[name!] = value!.replaceAll("&amp;", "&")
  }
  return found
}

const STREAM_CONTENT_TYPES = ["audio/x-l16;rate=8000", "audio/x-l16;rate=16000", "audio/x-mulaw;rate=8000"]

/** The stream a Plivo XML answer asks for: `<Stream …>url</Stream>`. */
const plivoStream = (xml: string): StreamTarget | null => {
  const match = /<Stream\b([^>]*)>([^<]*)<\/Stream>/.exec(xml)
  if (!match) return null
  const attrs = attributes(match[1]!)
  const url = match[2]!.trim().replaceAll("&amp;", "&")
  const parameters: Record<string, string> = {}
  for (const pair of (attrs.extraHeaders ?? "").split(",").filter(Boolean)) {
    const [key, value] = pair.split("=")
    parameters[key!] = value ?? ""
  }
  const contentType = attrs.contentType ?? "audio/x-l16;rate=8000"
  const refusal = !/^wss?:\/\//.test(url)
    ? `stream URL ${url} is not a WebSocket URL`
    : !STREAM_CONTENT_TYPES.includes(contentType)
    ? `Plivo does not stream ${contentType}`
    : contentType !== "audio/x-mulaw;rate=8000"
    ? `this stand-in streams audio/x-mulaw;rate=8000, not ${contentType}`
    : attrs.bidirectional !== "true"
    ? "a one-way stream cannot carry the agent's audio (bidirectional is not true)"
    : undefined
  return { url, parameters, ...(refusal ? { refusal } : {}), endsCallAtStart: attrs.keepCallAlive !== "true" }
}

const CALL_STATUS: Record<EndStatus, string> = {
  completed: "completed",
  busy: "busy",
  "no-answer": "no-answer",
  canceled: "cancel",
  failed: "failed"
}

/** The hangup cause (plivo.com/docs/voice/troubleshooting/hangup-causes) and its source. */
const hangup = (call: LoopbackCall) => {
  if (call.endedBy === "time-limit") return { name: "Scheduled Hangup", code: 4050, source: "Plivo" }
  if (call.endedBy === "stream") return { name: "End Of XML Instructions", code: 4010, source: "Answer XML" }
  switch (call.status as EndStatus) {
    case "completed":
      return call.endedBy === "api"
        ? { name: "Normal Hangup", code: 4000, source: "API Request" }
        : { name: "Normal Hangup", code: 4000, source: "Callee" }
    case "busy":
      return { name: "Busy Line", code: 3010, source: "Callee" }
    case "no-answer":
      return { name: "No Answer", code: 3000, source: "Carrier" }
    case "canceled":
      return { name: "Canceled", code: 1000, source: "API Request" }
    case "failed":
      return { name: "Destination Out Of Service", code: 2010, source: "Carrier" }
  }
}

const CALL_STATE: Record<EndStatus, string> = {
  completed: "ANSWER",
  busy: "BUSY",
  "no-answer": "NO_ANSWER",
  canceled: "CANCEL",
  failed: "FAILED"
}

const fieldsOf = (
  request: { headers: Record<string, string | string[] | undefined>; body: string }
): Record<string, any> | null => {
  if (String(request.headers["content-type"] ?? "").startsWith("application/json")) {
    try {
      return JSON.parse(request.body)
    } catch {
      return null
    }
  }
  return Object.fromEntries(new URLSearchParams(request.body))
}

const isUrl = (value: unknown) => typeof value === "string" && /^https?:\/\//.test(value)

export const startFakePlivo = async (options: StandInOptions = {}) => {
  const authId = `MA${crypto.randomBytes(9).toString("hex").toUpperCase()}`
  const authToken = crypto.randomBytes(20).toString("base64url")
  const base = `/v1/Account/${authId}`

  const signatureHeaders = (url: string, params: URLSearchParams) => {
    const nonce = String(crypto.randomInt(1e13, 2e14))
    return { "x-plivo-signature-v3": v3Signature(authToken, url, params, nonce), "x-plivo-signature-v3-nonce": nonce }
  }

  const signedForm = (url: string, fields: Record<string, string>) => {
    const params = new URLSearchParams(fields)
    return {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", ...signatureHeaders(url, params) },
      body: params.toString()
    }
  }

  const common = (call: FakePlivoCall, status: string) => ({
    CallUUID: call.id,
    From: call.from,
    To: call.to,
    Direction: "outbound",
    CallStatus: status,
    ALegUUID: call.id,
    ALegRequestUUID: call.placementId
  })

  const record = (call: FakePlivoCall) => {
    const cause = hangup(call)
    const duration = call.answeredAt === null ? 0 : Math.round((call.endedAt! - call.answeredAt) / 1000)
    return {
      api_id: apiId(),
      call_uuid: call.id,
      call_direction: "outbound",
      from_number: call.from,
      to_number: call.to,
      call_state: CALL_STATE[call.status as EndStatus],
      call_duration: duration,
      bill_duration: duration,
      billed_duration: Math.ceil(duration / 60) * 60,
      hangup_cause_name: cause.name,
      hangup_cause_code: cause.code,
      hangup_source: cause.source,
      initiation_time: new Date(call.createdAt).toISOString(),
      answer_time: call.answeredAt === null ? null : new Date(call.answeredAt).toISOString(),
      end_time: new Date(call.endedAt!).toISOString(),
      parent_call_uuid: null,
      resource_uri: `${base}/Call/${call.id}/`
    }
  }

  /** The `<Dial>` each transferred call runs, by call UUID, and its B leg's UUID. */
  const dials = new Map<string, { readonly dial: DialMarkup; readonly bLegUuid: string }>()

  const dialStatus = { answered: "completed", busy: "busy", "no-answer": "no-answer", failed: "failed" } as const

  /** The A leg fetches its new XML and runs it: a `<Dial>` is a transfer, anything else ends the call. */
  /** A call enters a conference, its `<Speak>` said first; the element's own `callbackUrl` hears it enter. */
  const enterConference = async (
    call: FakePlivoCall,
    conference: ConferenceMarkup,
    engine: Parameters<CarrierDialect<PlivoExtra>["rest"]>[1],
    endsStream: boolean
  ) => {
    call.heard.push(...conference.said)
    engine.enterRoom(conference.room, call, { endsStream })
    const url = conference.attributes.callbackUrl
    if (!url) return
    const fields = {
      ConferenceAction: "enter",
      ConferenceName: conference.room,
      ConferenceUUID: crypto.createHash("sha256").update(conference.room).digest("hex").slice(0, 36),
      ConferenceMemberID: String(call.joinedWith === null ? 1 : 2),
      CallUUID: call.id,
      To: call.to,
      From: call.from,
      CallStatus: "in-progress",
      Event: "ConferenceEnter"
    }
    if (conference.attributes.callbackMethod === "GET") {
      const getUrl = `${url}${url.includes("?") ? "&" : "?"}${new URLSearchParams(fields)}`
      await engine.deliver(getUrl, { method: "GET", headers: signatureHeaders(getUrl, new URLSearchParams()) })
    } else {
      await engine.deliver(url, signedForm(url, fields))
    }
  }

  const runTransferXml = async (
    call: FakePlivoCall,
    url: string,
    method: string,
    engine: Parameters<CarrierDialect<PlivoExtra>["rest"]>[1]
  ) => {
    const fields = { ...common(call, "in-progress"), Event: "Transfer" }
    const getUrl = `${url}${url.includes("?") ? "&" : "?"}${new URLSearchParams(fields)}`
    const { text } = method === "GET"
      ? await engine.deliver(getUrl, { method: "GET", headers: signatureHeaders(getUrl, new URLSearchParams()) })
      : await engine.deliver(url, signedForm(url, fields))
    call.answerMarkup = text
    const conference = plivoConferenceMarkup(text)
    // The XML replaces the `<Stream>`: the stream ends, the call enters the conference.
    if (conference !== null) return enterConference(call, conference, engine, true)
    const dial = dialMarkup(text)
    // Without a <Dial> this stand-in has nothing to run: the XML is over and so is the call.
    if (dial === null) return engine.hangUp(call)
    dials.set(call.id, { dial, bLegUuid: crypto.randomUUID() })
    engine.transfer(call, {
      destination: dial.noun.text,
      timeoutSeconds: Number(dial.attributes.timeout ?? "30"),
      endsStream: true
    })
  }

  const dialect: CarrierDialect<PlivoExtra> = {
    provider: "plivo",
    // Callback configurations: `rc` defaults to 1, retried on connection failures and read timeouts
    // (`rp=ct,rt`); `rt` defaults to 40 s an attempt and `tt` to 55 s for all of them.
    connectionRetries: 1,
    responseLimits: () => ({ attemptMs: 40_000, totalMs: 55_000, retryOnTimeout: true }),

    rest: async (request, engine) => {
      if (request.headers.authorization !== `Basic ${Buffer.from(`${authId}:${authToken}`).toString("base64")}`) {
        return error(401, "Authentication failed")
      }
      if (!request.url.pathname.startsWith(`${base}/`)) return error(404, "not found")
      const path = request.url.pathname.slice(base.length)
      if (request.method === "POST" && path === "/Call/") {
        const body = fieldsOf(request)
        if (body === null) return error(400, "invalid JSON")
        const missing = ["from", "to", "answer_url"].find((field) =>
          typeof body[field] !== "string" || body[field] === ""
        )
        if (missing) return error(400, `${missing} is required`)
        if (!/^\+?\d{7,15}$/.test(body.from)) return error(400, "from must be a phone number with its country code")
        if (!/^(\+?\d{7,15}|sip:.+)$/.test(body.to)) {
          return error(400, "to must be a phone number with its country code or a SIP URI")
        }
        for (const field of ["answer_url", "ring_url", "hangup_url", "machine_detection_url"]) {
          if (body[field] !== undefined && !isUrl(body[field])) return error(400, `${field} must be a URL`)
        }
        for (const field of ["answer_method", "ring_method", "hangup_method", "machine_detection_method"]) {
          if (body[field] !== undefined && body[field] !== "GET" && body[field] !== "POST") {
            return error(400, `${field} must be GET or POST`)
          }
        }
        if (
          body.time_limit !== undefined && !(Number.isInteger(Number(body.time_limit)) && Number(body.time_limit) > 0)
        ) {
          return error(400, "time_limit must be an integer greater than 0")
        }
        if (
          body.ring_timeout !== undefined &&
          !(Number.isInteger(Number(body.ring_timeout)) && Number(body.ring_timeout) > 0)
        ) {
          return error(400, "ring_timeout must be an integer greater than 0")
        }
        if (
          body.machine_detection !== undefined && body.machine_detection !== "true" &&
          body.machine_detection !== "hangup"
        ) {
          return error(400, "machine_detection must be true or hangup")
        }
        if (engine.refusesCallerId(body.from)) {
          return error(400, "from number is not a verified caller ID of this account")
        }
        const rejection = engine.takeRejection()
        if (rejection) return error(rejection.status, rejection.code)
        const requestUuid = crypto.randomUUID()
        const call = engine.place({
          id: crypto.randomUUID(),
          placementId: requestUuid,
          to: body.to.replace(/^\+/, ""),
          from: body.from.replace(/^\+/, ""),
          machineDetection: body.machine_detection !== undefined,
          timeLimitSeconds: body.time_limit === undefined ? 14400 : Number(body.time_limit),
          extra: {
            answerUrl: body.answer_url,
            answerMethod: body.answer_method ?? "POST",
            ringUrl: body.ring_url ?? null,
            hangupUrl: body.hangup_url ?? null,
            machineDetectionUrl: body.machine_detection_url ?? null
          }
        })
        await engine.replyDelay(call)
        return json(201, { api_id: apiId(), message: "call fired", request_uuid: requestUuid })
      }
      const byRequest = /^\/Request\/([0-9a-f-]{36})\/$/.exec(path)
      if (byRequest) {
        const call = engine.findBy((candidate) => candidate.placementId === byRequest[1])
        // Only a request whose call has not been answered can be cancelled.
        if (request.method !== "DELETE" || !call || call.endedAt !== null || call.answeredAt !== null) {
          return error(404, "not found")
        }
        engine.hangUp(call)
        return json(204)
      }
      const byCall = /^\/Call\/([0-9a-f-]{36})\/$/.exec(path)
      const call = byCall ? engine.find(byCall[1]!) : undefined
      if (!call) return error(404, "not found")
      if (request.method === "DELETE") {
        if (call.endedAt !== null) return error(404, "not found")
        engine.hangUp(call)
        return json(204)
      }
      if (request.method === "POST") {
        if (call.endedAt !== null || call.status !== "in-progress") return error(404, "not found")
        const body = fieldsOf(request)
        if (body === null) return error(400, "invalid JSON")
        const legs = body.legs ?? "aleg"
        if (!["aleg", "bleg", "both"].includes(legs)) return error(400, "legs must be aleg, bleg or both")
        if (legs !== "aleg") return error(400, "this call has no bridged leg to transfer")
        if (!isUrl(body.aleg_url)) return error(400, "aleg_url must be specified when legs is aleg or both")
        const method = body.aleg_method ?? "POST"
        if (method !== "GET" && method !== "POST") return error(400, "aleg_method must be GET or POST")
        void runTransferXml(call, body.aleg_url, method, engine)
        return json(202, { api_id: apiId(), message: "call transferred" })
      }
      if (request.method === "GET" && request.url.searchParams.get("status") === "live") {
        if (call.endedAt !== null) return error(404, "not found")
        return json(200, {
          api_id: apiId(),
          call_status: call.status === "in-progress" ? "in-progress" : "ringing",
          call_uuid: call.id,
          request_uuid: call.placementId,
          direction: "outbound",
          from: call.from,
          to: call.to,
          caller_name: call.from,
          session_start: new Date(call.createdAt).toISOString()
        })
      }
      // Its record exists once the call is over.
      if (request.method === "GET") return call.endedAt === null ? error(404, "not found") : json(200, record(call))
      return error(405, "method not allowed")
    },

    report: async (call, step, engine) => {
      const post = (
        url: string | null,
        fields: Record<string, string>
      ) => (url === null ? Promise.resolve() : engine.deliver(url, signedForm(url, fields)))
      if (step === "ringing") await post(call.ringUrl, { ...common(call, "ringing"), Event: "Ring" })
      if (step === "machine-verdict" && call.answeredBy !== null) {
        await post(call.machineDetectionUrl, {
          ...common(call, "in-progress"),
          RequestUUID: call.placementId,
          Machine: String(call.answeredBy === "machine"),
          IfMachine: "continue",
          Event: "MachineDetection"
        })
      }
      if (step === "ended") {
        const cause = hangup(call)
        const duration = String(engine.talkSeconds(call))
        await post(call.hangupUrl, {
          ...common(call, CALL_STATUS[call.status as EndStatus]),
          HangupCause: cause.name,
          HangupCauseName: cause.name,
          HangupCauseCode: String(cause.code),
          HangupSource: cause.source,
          Duration: duration,
          BillDuration: duration,
          StartTime: new Date(call.createdAt).toISOString(),
          ...(call.answeredAt === null ? {} : { AnswerTime: new Date(call.answeredAt).toISOString() }),
          EndTime: new Date(call.endedAt!).toISOString(),
          Event: "Hangup"
        })
      }
    },

    answer: async (call, engine) => {
      const fields = { ...common(call, "in-progress"), Event: "StartApp" }
      const getUrl = `${call.answerUrl}${call.answerUrl.includes("?") ? "&" : "?"}${new URLSearchParams(fields)}`
      const { text } = call.answerMethod === "GET"
        ? await engine.deliver(getUrl, { method: "GET", headers: signatureHeaders(getUrl, new URLSearchParams()) })
        : await engine.deliver(call.answerUrl, signedForm(call.answerUrl, fields))
      call.answerMarkup = text
      const conference = plivoConferenceMarkup(text)
      if (conference !== null) {
        await enterConference(call, conference, engine, false)
        return null
      }
      return plivoStream(text)
    },

    media: (call) => ({ accountId: authId, callId: call.id }),

    transferReport: async (call, transfer, step, engine) => {
      const { bLegUuid, dial } = dials.get(call.id)!
      const dialFields = { ...common(call, "in-progress"), DialALegUUID: call.id, DialBLegUUID: bLegUuid }
      if (step === "answered") {
        const callbackUrl = dial.attributes.callbackUrl
        if (callbackUrl) {
          await engine.deliver(
            callbackUrl,
            signedForm(callbackUrl, {
              ...dialFields,
              DialAction: "answer",
              DialBLegStatus: "answer",
              DialBLegTo: transfer.destination
            })
          )
        }
        return "continues"
      }
      const action = dial.attributes.action
      if (!action) return "ends"
      const { text } = await engine.deliver(
        action,
        signedForm(action, {
          ...dialFields,
          DialStatus: dialStatus[transfer.result!],
          DialRingStatus: String(transfer.result === "answered"),
          DialHangupCause: transfer.result === "answered"
            ? "NORMAL_CLEARING"
            : transfer.result === "busy"
            ? "USER_BUSY"
            : "NO_ANSWER"
        })
      )
      call.answerMarkup = text
      const stream = plivoStream(text)
      if (stream !== null) return { reconnect: stream }
      return endsTheCall(text) ? "ends" : "continues"
    }
  }

  const carrier = await startCarrierServer(dialect, options)
  return {
    ...carrier,
    authId,
    authToken,
    calls: () => carrier.calls() as ReadonlyArray<FakePlivoCall>,
    rejectNextCalls: (count: number, status = 400, code = "invalid destination number") =>
      carrier.rejectNextCalls(count, status, code),
    /** The `config` of a telephony configuration pointing at this carrier. */
    telephonyConfig: (settings: { readonly machineDetection?: boolean } = {}) => ({
      provider: "plivo",
      auth_id: authId,
      auth_token: authToken,
      amd_enabled: settings.machineDetection ?? false,
      api_base_url: carrier.url
    })
  }
}
