import * as crypto from "node:crypto"
import {
  type CarrierDialect,
  type LoopbackCall,
  type RestReply,
  type StandInOptions,
  startCarrierServer,
  type StreamTarget
} from "./loopbackCarrier.ts"

/**
 * A loopback Vonage Voice API (developer.vonage.com/en/api/voice, v1):
 * - `POST /v1/calls`, `GET|PUT /v1/calls/{uuid}` authenticated by the application's JWT (RS256,
 *   `application_id`, `iat`, `jti`, `exp` honoured), checked with the application's public key;
 * - the create-call body as the API specifies it: `to` a one-item array of `{type: "phone",
 *   number}` and `from` a phone endpoint, numbers of 7 to 15 digits without `+`; `answer_url` and
 *   `event_url` arrays; `length_timer` 1–7200, `ringing_timer` 1–120, `machine_detection`
 *   continue|hangup; 201 `{uuid, status: "started", direction, conversation_uuid}`;
 * - hang-up with `PUT {"action": "hangup"}` (204; 400 once the call is over, 404 for no call);
 * - the answer webhook (`answer_method` POST: JSON `{to, from, uuid, conversation_uuid}`) and
 *   event webhooks (`started`, `ringing`, `answered`, the `human`/`machine` verdict of
 *   `machine_detection: continue` while the call goes on, then `completed` with `duration`, or
 *   `busy`/`timeout`/`failed`/`cancelled`), each signed as Vonage signs them: a JWT (HS256 with
 *   the signature secret) in `Authorization: Bearer`, with `iat`, `jti`, `api_key`,
 *   `application_id` and `payload_hash`, the SHA-256 of the body;
 * - the NCCO's `connect` to a `websocket` endpoint (`uri`, `content-type` audio/l16 at 8 or
 *   16 kHz, `headers` delivered in `websocket:connected`). This stand-in's media speaks 16 kHz;
 * - transfer with `PUT {"action": "transfer", "destination": {"type": "ncco", "ncco": [...]}}` (204;
 *   400 once the call is over): the caller's leg leaves the conversation with the agent's WebSocket
 *   (which ends) and runs the new NCCO. Its `connect` rings a `phone` endpoint (digits, with `from`
 *   or `randomFromNumber`, never both) or a `sip` endpoint (`uri`) for `timeout` seconds (default
 *   60); the new leg's events (`started`, `ringing`, `answered`, `completed`, or `busy`, `timeout`,
 *   `failed`) go to the connect's `eventUrl`. When the connect is over the NCCO is done: the call
 *   ends, unless the connect is `eventType: "synchronous"` and the answer to its busy, timeout or
 *   failed event is an NCCO: that one replaces the rest and runs (this stand-in: a WebSocket
 *   `connect`, a new media stream). Without `synchronous` the answer's body is ignored;
 * - a call created with an inline `ncco` (instead of `answer_url`; `to` a phone or SIP endpoint)
 *   runs it once answered: `talk` (text ≤ 1500), `notify` (string payload, posted signed to its
 *   `eventUrl`; an NCCO in the answer replaces the rest), `conversation` (by `name`). A transfer
 *   whose NCCO is a `conversation` moves the leg into that named conversation. A number scripted
 *   as a transfer's destination is a person who answers (or not) and stays on the line.
 */

interface VonageExtra {
  readonly conversationUuid: string
  /** The NCCO given with the call (`ncco`) instead of an answer URL. */
  readonly ncco: ReadonlyArray<Record<string, any>> | null
  readonly answerUrl: string
  readonly answerMethod: "GET" | "POST"
  readonly eventUrl: string
}

type FakeVonageCall = LoopbackCall & VonageExtra

const json = (status: number, body?: unknown): RestReply => (body === undefined ? { status } : { status, body })

const badRequest = (reason: string, name?: string) =>
  json(400, {
    type: "https://developer.nexmo.com/api-errors#bad-request",
    title: "Bad Request",
    detail: reason,
    ...(name ? { invalid_parameters: [{ name, reason }] } : {})
  })

const unauthorized = json(401, {
  type: "https://developer.nexmo.com/api-errors#unauthorized",
  title: "Unauthorized",
  detail: "You did not provide correct credentials."
})

const jsonPart = (part: string): Record<string, any> | null => {
  try {
    const value: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"))
    return typeof value === "object" && value !== null ? (value as Record<string, any>) : null
  } catch {
    return null
  }
}

/** The application JWT the Voice API requires, checked as Vonage checks it. */
const applicationJwtValid = (authorization: string | undefined, applicationId: string, publicKey: crypto.KeyObject) => {
  if (!authorization?.startsWith("Bearer ")) return false
  const [header, claims, signature] = authorization.slice(7).split(".")
  if (!header || !claims || !signature) return false
  if (jsonPart(header)?.alg !== "RS256") return false
  if (
    !crypto.verify("RSA-SHA256", Buffer.from(`${header}.${claims}`), publicKey, Buffer.from(signature, "base64url"))
  ) return false
  const body = jsonPart(claims)
  const now = Math.floor(Date.now() / 1000)
  return body !== null && body.application_id === applicationId && typeof body.iat === "number" &&
    body.iat <= now + 60 &&
    typeof body.jti === "string" && body.jti.length > 0 &&
    (body.exp === undefined || (typeof body.exp === "number" && body.exp > now))
}

const isPhone = (endpoint: unknown): endpoint is { type: "phone"; number: string } =>
  typeof endpoint === "object" && endpoint !== null && (endpoint as any).type === "phone" &&
  /^\d{7,15}$/.test(String((endpoint as any).number))

const isUrlArray = (value: unknown) =>
  Array.isArray(value) && value.length === 1 && typeof value[0] === "string" && /^https?:\/\//.test(value[0])

const isSip = (endpoint: unknown): endpoint is { type: "sip"; uri: string } =>
  typeof endpoint === "object" && endpoint !== null && (endpoint as any).type === "sip" &&
  /^sips?:[^@\s]+@\S+$/.test(String((endpoint as any).uri))

/**
 * What is wrong with an NCCO of the actions this stand-in runs without a media stream
 * (developer.vonage.com/en/voice/voice-api/ncco-reference): `talk` needs `text` (at most 1500
 * characters); `notify` a `payload` object of string values and `eventUrl` (an array of one URL),
 * `eventMethod` GET or POST; `conversation` a `name`.
 */
const nccoRefusal = (ncco: unknown): string | null => {
  if (!Array.isArray(ncco) || ncco.length === 0) return "ncco must be a non-empty array of actions"
  for (const action of ncco) {
    switch (action?.action) {
      case "talk":
        if (typeof action.text !== "string" || action.text === "" || action.text.length > 1500) {
          return "talk needs text of at most 1500 characters"
        }
        break
      case "notify":
        if (
          typeof action.payload !== "object" || action.payload === null ||
          !Object.values(action.payload).every((value) => typeof value === "string")
        ) return "notify needs a payload of string values"
        if (!isUrlArray(action.eventUrl)) return "notify needs eventUrl, an array of one URL"
        if (action.eventMethod !== undefined && action.eventMethod !== "GET" && action.eventMethod !== "POST") {
          return "eventMethod must be GET or POST"
        }
        break
      case "conversation":
        if (typeof action.name !== "string" || action.name === "") return "conversation needs a name"
        break
      default:
        return `this stand-in does not run ${String(action?.action)} without a media stream`
    }
  }
  return null
}

const integerIn = (value: unknown, min: number, max: number) =>
  value === undefined || (Number.isInteger(value) && (value as number) >= min && (value as number) <= max)

/** The media stream an NCCO connects: the first `connect` action's websocket endpoint. */
const nccoStream = (text: string): StreamTarget | null => {
  let ncco: unknown
  try {
    ncco = JSON.parse(text)
  } catch {
    return null
  }
  if (!Array.isArray(ncco)) return null
  const connect = ncco.find((action) => action?.action === "connect")
  const endpoint = connect?.endpoint?.[0]
  if (endpoint?.type !== "websocket" || typeof endpoint.uri !== "string" || !/^wss?:\/\//.test(endpoint.uri)) {
    return null
  }
  const headers: Record<string, string> = {}
  for (const [name, value] of Object.entries(endpoint.headers ?? {})) headers[name] = String(value)
  const contentType = endpoint["content-type"]
  if (contentType !== "audio/l16;rate=16000") {
    return {
      url: endpoint.uri,
      parameters: headers,
      refusal:
        `websocket content-type ${contentType} (Vonage takes audio/l16;rate=8000|16000; this stand-in streams 16000)`
    }
  }
  return { url: endpoint.uri, parameters: headers }
}

const VONAGE_STATUS = {
  completed: "completed",
  busy: "busy",
  "no-answer": "timeout",
  failed: "failed",
  canceled: "cancelled"
} as const

export const startFakeVonage = async (options: StandInOptions = {}) => {
  const applicationId = crypto.randomUUID()
  const apiKey = crypto.randomBytes(4).toString("hex")
  const apiSecret = crypto.randomBytes(8).toString("hex")
  const signatureSecret = crypto.randomBytes(24).toString("base64url")
  const keys = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 })
  const privateKey = keys.privateKey.export({ format: "pem", type: "pkcs8" }).toString()
  const publicKey = keys.publicKey.export({ format: "pem", type: "spki" }).toString()
  /** Every JWT the product presented, for checking them with Vonage's own library. */
  const presentedTokens: Array<string> = []

  /** A webhook JWT as Vonage signs it (HS256 over the signature secret, with the payload's SHA-256). */
  const webhookToken = (payload: string) => {
    const header = Buffer.from(JSON.stringify({ alg: "HS256", typ: "JWT" })).toString("base64url")
    const claims = Buffer.from(JSON.stringify({
      iat: Math.floor(Date.now() / 1000),
      jti: crypto.randomUUID(),
      iss: "Vonage",
      api_key: apiKey,
      application_id: applicationId,
      payload_hash: crypto.createHash("sha256").update(payload).digest("hex")
    })).toString("base64url")
    return `${header}.${claims}.${
      crypto.createHmac("sha256", signatureSecret).update(`${header}.${claims}`).digest("base64url")
    }`
  }

  const signedJson = (payload: Record<string, unknown>) => {
    const body = JSON.stringify(payload)
    return {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${webhookToken(body)}` },
      body
    }
  }

  const identity = (call: FakeVonageCall) => ({
    from: call.from,
    to: call.to,
    uuid: call.id,
    conversation_uuid: call.conversationUuid,
    direction: "outbound"
  })

  const resource = (call: FakeVonageCall) => ({
    uuid: call.id,
    conversation_uuid: call.conversationUuid,
    to: { type: "phone", number: call.to },
    from: { type: "phone", number: call.from },
    status: call.status === "in-progress"
      ? "answered"
      : call.status === "queued"
      ? "started"
      : VONAGE_STATUS[call.status as keyof typeof VONAGE_STATUS] ?? call.status,
    direction: "outbound",
    ...(call.endedAt === null
      ? {}
      : { duration: String(call.answeredAt === null ? 0 : Math.round((call.endedAt - call.answeredAt) / 1000)) })
  })

  /** The connect each transferred call's NCCO runs: where its leg's events go, and the leg's uuid. */
  const connects = new Map<
    string,
    { readonly eventUrl: string; readonly legUuid: string; readonly synchronous: boolean }
  >()

  /**
   * What is wrong with a transfer request, in Vonage's terms; this stand-in runs NCCOs made of one
   * `connect` (what a transfer to a person is).
   */
  const transferRefusal = (body: Record<string, any>): { reason: string; name: string } | null => {
    const destination = body.destination
    if (destination?.type !== "ncco") return { reason: "destination.type must be ncco", name: "destination" }
    if (Array.isArray(destination.url)) return null
    const ncco = destination.ncco
    if (!Array.isArray(ncco) || ncco.length === 0) return { reason: "destination.ncco must be an array", name: "ncco" }
    if (ncco[0]?.action === "conversation") {
      const refusal = nccoRefusal(ncco)
      return refusal === null ? null : { reason: refusal, name: "ncco" }
    }
    const connect = ncco[0]
    if (connect?.action !== "connect") return { reason: "this stand-in runs a connect action only", name: "ncco" }
    if (connect.timeout !== undefined && !(Number.isInteger(connect.timeout) && connect.timeout > 0)) {
      return { reason: "timeout must be a positive integer", name: "timeout" }
    }
    if (connect.eventType !== undefined && connect.eventType !== "synchronous") {
      return { reason: "eventType must be synchronous", name: "eventType" }
    }
    if (connect.eventUrl !== undefined && !(Array.isArray(connect.eventUrl) && connect.eventUrl.length === 1)) {
      return { reason: "eventUrl must be an array of one URL", name: "eventUrl" }
    }
    const endpoint = Array.isArray(connect.endpoint) && connect.endpoint.length === 1 ? connect.endpoint[0] : null
    if (endpoint?.type === "phone") {
      if (typeof endpoint.number !== "string" || !/^[1-9]\d{6,14}$/.test(endpoint.number)) {
        return { reason: "number must be 7 to 15 digits without +", name: "number" }
      }
      if ((connect.from !== undefined) === (connect.randomFromNumber === true)) {
        return { reason: "a phone endpoint needs from or randomFromNumber, not both", name: "from" }
      }
      return null
    }
    if (endpoint?.type === "sip") {
      return typeof endpoint.uri === "string" && /^sips?:[^@\s]+@\S+$/.test(endpoint.uri)
        ? null
        : { reason: "uri must be a SIP URI", name: "uri" }
    }
    return { reason: "endpoint must be one phone or sip endpoint", name: "endpoint" }
  }

  const legStatus = { busy: "busy", "no-answer": "timeout", failed: "failed" } as const

  /**
   * Runs an NCCO without a media stream: `talk` is said to the callee, `notify` posts its payload
   * (signed, as every webhook) and an NCCO in the answer replaces the rest, `conversation` puts
   * the call in the named conversation.
   */
  const runNcco = async (
    call: FakeVonageCall,
    ncco: ReadonlyArray<Record<string, any>>,
    engine: Parameters<CarrierDialect<VonageExtra>["answer"]>[1]
  ): Promise<void> => {
    for (const [index, action] of ncco.entries()) {
      if (call.endedAt !== null) return
      if (action.action === "talk") call.heard.push(action.text)
      if (action.action === "conversation") {
        engine.enterRoom(action.name, call, { endsStream: false })
        return
      }
      if (action.action === "notify") {
        const { text } = await engine.deliver(action.eventUrl[0], signedJson(action.payload))
        let answer: unknown = null
        try {
          answer = JSON.parse(text)
        } catch {
          // Not JSON: not an NCCO, the NCCO goes on.
        }
        if (Array.isArray(answer) && nccoRefusal(answer) === null) return runNcco(call, answer, engine)
      }
      if (index === ncco.length - 1) engine.hangUp(call)
    }
  }

  const dialect: CarrierDialect<VonageExtra> = {
    provider: "vonage",
    // Voice API troubleshooting: a request that gets no response is retried twice. The answer
    // webhook must answer within 5 s (the most its socket timeout can be set to), the event
    // webhook within 10 s (likewise).
    connectionRetries: 2,
    responseLimits: (kind) =>
      kind === "answer"
        ? { attemptMs: 5_000, totalMs: 15_000, retryOnTimeout: true }
        : { attemptMs: 10_000, totalMs: 30_000, retryOnTimeout: true },

    rest: async (request, engine) => {
      if (!applicationJwtValid(request.headers.authorization, applicationId, keys.publicKey)) return unauthorized
      presentedTokens.push(request.headers.authorization!.slice(7))
      if (request.method === "POST" && request.url.pathname === "/v1/calls") {
        let body: Record<string, any>
        try {
          body = JSON.parse(request.body)
        } catch {
          return badRequest("The request body is not JSON")
        }
        if (!Array.isArray(body.to) || body.to.length !== 1 || !(isPhone(body.to[0]) || isSip(body.to[0]))) {
          return badRequest("to must be one phone endpoint with 7 to 15 digits or a SIP endpoint", "to")
        }
        if (!isPhone(body.from)) return badRequest("from must be a phone endpoint with 7 to 15 digits", "from")
        if (!isUrlArray(body.answer_url) && !Array.isArray(body.ncco)) {
          return badRequest("answer_url or ncco is required", "answer_url")
        }
        if (!isUrlArray(body.event_url)) return badRequest("event_url must be an array of one URL", "event_url")
        if (body.ncco !== undefined) {
          const refusal = nccoRefusal(body.ncco)
          if (refusal !== null) return badRequest(refusal, "ncco")
        }
        if (body.answer_method !== undefined && body.answer_method !== "GET" && body.answer_method !== "POST") {
          return badRequest("answer_method must be GET or POST", "answer_method")
        }
        if (body.event_method !== undefined && body.event_method !== "GET" && body.event_method !== "POST") {
          return badRequest("event_method must be GET or POST", "event_method")
        }
        if (!integerIn(body.length_timer, 1, 7200)) {
          return badRequest("length_timer must be an integer from 1 to 7200", "length_timer")
        }
        if (!integerIn(body.ringing_timer, 1, 120)) {
          return badRequest("ringing_timer must be an integer from 1 to 120", "ringing_timer")
        }
        if (
          body.machine_detection !== undefined && body.machine_detection !== "continue" &&
          body.machine_detection !== "hangup"
        ) {
          return badRequest("machine_detection must be continue or hangup", "machine_detection")
        }
        if (engine.refusesCallerId(body.from.number)) {
          return badRequest("The from number is not a number linked to this account", "from.number")
        }
        const rejection = engine.takeRejection()
        if (rejection) {
          return json(rejection.status, { type: "https://developer.nexmo.com/api-errors", title: rejection.code })
        }
        const call = engine.place({
          id: crypto.randomUUID(),
          to: body.to[0].type === "phone" ? body.to[0].number : body.to[0].uri,
          from: body.from.number,
          machineDetection: body.machine_detection !== undefined,
          timeLimitSeconds: body.length_timer ?? 7200,
          extra: {
            conversationUuid: `CON-${crypto.randomUUID()}`,
            ncco: body.ncco ?? null,
            answerUrl: body.answer_url?.[0] ?? "",
            answerMethod: body.answer_method ?? "GET",
            eventUrl: body.event_url[0]
          }
        })
        await engine.replyDelay(call)
        return json(201, {
          uuid: call.id,
          status: "started",
          direction: "outbound",
          conversation_uuid: call.conversationUuid
        })
      }
      const uuid = /^\/v1\/calls\/([0-9a-f-]{36})$/.exec(request.url.pathname)?.[1]
      const call = uuid === undefined ? undefined : engine.find(uuid)
      if (!call) {
        return json(404, {
          type: "https://developer.nexmo.com/api-errors#not-found",
          title: "Not Found",
          detail: `Call ${uuid} was not found`
        })
      }
      if (request.method === "GET") return json(200, resource(call))
      if (request.method === "PUT") {
        let action: unknown
        try {
          action = JSON.parse(request.body).action
        } catch {
          return badRequest("The request body is not JSON")
        }
        if (action === "transfer") {
          if (call.endedAt !== null || call.status !== "in-progress") return badRequest("The call is not in progress")
          const refusal = transferRefusal(JSON.parse(request.body))
          if (refusal !== null) return badRequest(refusal.reason, refusal.name)
          const first = JSON.parse(request.body).destination.ncco[0]
          if (first.action === "conversation") {
            // The leg leaves the conversation with the agent's WebSocket (which ends) for the named one.
            engine.enterRoom(first.name, call, { endsStream: true })
            return json(204)
          }
          const connect = first
          const endpoint = connect.endpoint[0]
          connects.set(call.id, {
            eventUrl: connect.eventUrl?.[0] ?? call.eventUrl,
            legUuid: crypto.randomUUID(),
            synchronous: connect.eventType === "synchronous"
          })
          engine.transfer(call, {
            destination: endpoint.type === "phone" ? endpoint.number : endpoint.uri,
            timeoutSeconds: connect.timeout ?? 60,
            endsStream: true
          })
          return json(204)
        }
        if (action !== "hangup") return badRequest(`Unsupported action ${String(action)}`, "action")
        if (call.endedAt !== null) return badRequest("The call is not in progress")
        engine.hangUp(call)
        return json(204)
      }
      return json(405, { title: "Method Not Allowed" })
    },

    report: async (call, step, engine) => {
      const event = (status: string, extra: Record<string, unknown> = {}) =>
        engine.deliver(
          call.eventUrl,
          signedJson({ ...identity(call), status, timestamp: new Date().toISOString(), ...extra })
        )
      if (step === "initiated") await event("started")
      if (step === "ringing") await event("ringing")
      if (step === "answered") await event("answered", { start_time: new Date(call.answeredAt!).toISOString() })
      if (step === "machine-verdict" && call.answeredBy !== null) {
        await event(call.answeredBy, { call_uuid: call.id, sub_state: "answering_machine" })
      }
      if (step === "ended") {
        const status = VONAGE_STATUS[call.status as keyof typeof VONAGE_STATUS]
        await event(
          status,
          status === "completed"
            ? { duration: String(engine.talkSeconds(call)), end_time: new Date(call.endedAt!).toISOString() }
            : {}
        )
      }
    },

    transferReport: async (call, transfer, step, engine) => {
      const connect = connects.get(call.id)!
      const event = (status: string) =>
        engine.deliver(
          connect.eventUrl,
          signedJson({
            from: call.from,
            to: transfer.destination,
            uuid: connect.legUuid,
            conversation_uuid: call.conversationUuid,
            direction: "outbound",
            status,
            timestamp: new Date().toISOString()
          })
        )
      if (step === "answered") {
        await event("started")
        await event("ringing")
        await event("answered")
        return "continues"
      }
      if (transfer.result === "answered") {
        await event("completed")
        // The connect was the NCCO's last action.
        return "ends"
      }
      await event("started")
      const { text } = await event(legStatus[transfer.result!])
      // Only a synchronous connect's event may answer an NCCO, which replaces the rest of the call's
      // (this stand-in runs one that connects a WebSocket); otherwise the NCCO ended with the connect.
      const stream = connect.synchronous ? nccoStream(text) : null
      return stream === null ? "ends" : { reconnect: stream }
    },

    answer: async (call, engine) => {
      if (call.ncco !== null) {
        await runNcco(call, call.ncco, engine)
        return null
      }
      if (call.answerUrl === "") return null
      const fields = { to: call.to, from: call.from, uuid: call.id, conversation_uuid: call.conversationUuid }
      const { text } = call.answerMethod === "POST"
        ? await engine.deliver(call.answerUrl, signedJson(fields), "answer")
        : await (async () => {
          // For a GET, the hash is of the query's fields as compact JSON, in their order.
          const url = `${call.answerUrl}${call.answerUrl.includes("?") ? "&" : "?"}${new URLSearchParams(fields)}`
          return engine.deliver(url, {
            method: "GET",
            headers: { authorization: `Bearer ${webhookToken(JSON.stringify(fields))}` }
          }, "answer")
        })()
      call.answerMarkup = text
      return nccoStream(text)
    }
  }

  const carrier = await startCarrierServer(dialect, options)
  return {
    ...carrier,
    applicationId,
    privateKey,
    publicKey,
    signatureSecret,
    presentedTokens: () => [...presentedTokens],
    calls: () => carrier.calls() as ReadonlyArray<FakeVonageCall>,
    rejectNextCalls: (count: number, status = 400, code = "invalid-number") =>
      carrier.rejectNextCalls(count, status, code),
    /** The `config` of a telephony configuration pointing at this carrier. */
    telephonyConfig: (settings: { readonly machineDetection?: boolean } = {}) => ({
      provider: "vonage",
      api_key: apiKey,
      api_secret: apiSecret,
      application_id: applicationId,
      private_key: privateKey,
      signature_secret: signatureSecret,
      amd_enabled: settings.machineDetection ?? false,
      api_base_url: carrier.url
    })
  }
}
