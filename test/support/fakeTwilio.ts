import * as crypto from "node:crypto"
import { twilioSignature } from "../../src/telephony/twilioSignature.ts"
import { type ConferenceMarkup, conferenceMarkup } from "./conferenceMarkup.ts"
import { type DialMarkup, dialMarkup, endsTheCall } from "./dialMarkup.ts"
import {
  type CarrierDialect,
  type LoopbackCall,
  type RestReply,
  type StandInOptions,
  startCarrierServer
} from "./loopbackCarrier.ts"
import { twimlStream } from "./twimlStream.ts"

export type { CalleeAnswer, CallScript, ScriptedOutcome } from "./loopbackCarrier.ts"

/**
 * A loopback carrier that speaks Twilio's REST API for calls (twilio.com/docs/voice/api/call-resource)
 * and sends signed status callbacks (X-Twilio-Signature), so the product's real Twilio adapter can
 * be exercised end to end. The call's life is loopbackCarrier.ts's; this is Twilio's dialect of it.
 *
 * The answer document is fetched with the answered callback's fields; a `<Connect><Stream>` in it
 * is opened, as Twilio documents, without the `<Stream url>`'s query string, which Twilio does not
 * support; only `<Parameter>` values reach the server, in the `start` message (streamRequestUrl,
 * carrierWire.ts). The upgrade is signed like any request to the URL as written.
 *
 * Updating a live call with `Twiml` (twilio.com/docs/voice/api/call-resource#update-a-call-resource)
 * replaces the instructions it runs: the `<Connect><Stream>` ends (the stream is stopped) and a
 * `<Dial>` rings its `<Number>` or `<Sip>` for `timeout` seconds (5–600, default 30). A call not in
 * progress cannot be updated (400, code 21220). The noun's `statusCallback` hears `answered` when
 * `statusCallbackEvent` asks for it; the Dial's `action` gets `DialCallStatus` (completed, busy,
 * no-answer, failed) once the dial is over and answers the TwiML the call runs next (a new
 * `<Connect><Stream>` connects the caller to a new stream, `<Hangup/>` or nothing ends the call).
 *
 * A call may be created with inline `Twiml` instead of `Url` (at most 4000 characters) and a ring
 * `Timeout` (at most 600 s, default 60); answered, it says its `<Say>` to the callee and enters its
 * `<Dial><Conference>`. A live call updated with a `<Dial><Conference>` leaves its stream for the
 * conference. The conference's `statusCallback` is its first participant's, and hears
 * `participant-join` for each call entering when `statusCallbackEvent` has `join`.
 */

interface TwilioExtra {
  readonly sid: string
  readonly answerUrl: string
  /** The instructions given inline (`Twiml`) instead of an answer URL. */
  readonly twiml: string | null
  readonly statusCallback: string
  readonly statusCallbackEvents: ReadonlyArray<string>
}

export type FakeCall = LoopbackCall & TwilioExtra

interface FakeTwilioOptions extends StandInOptions {
  readonly accountSid?: string
  readonly authToken?: string
}

const form = (body: string) => {
  const params = new URLSearchParams(body)
  const single: Record<string, string> = {}
  for (const key of new Set(params.keys())) single[key] = params.get(key)!
  return { params, single }
}

const json = (status: number, body: unknown): RestReply => ({ status, body })

/** POSTs a form signed as Twilio signs it. */
const signedForm = (authToken: string, url: string, params: Record<string, string>) => ({
  method: "POST",
  headers: {
    "content-type": "application/x-www-form-urlencoded",
    "x-twilio-signature": twilioSignature(authToken, url, params)
  },
  body: new URLSearchParams(params).toString()
})

export const startFakeTwilio = async (options: FakeTwilioOptions = {}) => {
  const accountSid = options.accountSid ?? "AC00000000000000000000000000000001"
  const authToken = options.authToken ?? "fake-twilio-auth-token"

  const callbackParams = (call: FakeCall, status: string, extra: Record<string, string> = {}) => ({
    AccountSid: accountSid,
    CallSid: call.sid,
    From: call.from,
    To: call.to,
    Direction: "outbound-api",
    CallStatus: status,
    ...extra
  })

  /** Twilio's AMD decides at the answer and says so on the answered and final callbacks. */
  const answeredBy = (call: FakeCall): Record<string, string> =>
    call.answeredBy === null ? {} : { AnsweredBy: call.answeredBy === "machine" ? "machine_end_beep" : "human" }

  const resource = (call: FakeCall) => ({
    sid: call.sid,
    account_sid: accountSid,
    to: call.to,
    from: call.from,
    status: call.status,
    duration: call.endedAt === null ? null : String(Math.round((call.endedAt - call.createdAt) / 1000)),
    answered_by: null
  })

  /** The last status callback posted for each call, by call sid. */
  const posted = new Map<string, Promise<unknown>>()

  /** The `<Dial>` each transferred call runs, by call sid. */
  const dials = new Map<string, DialMarkup>()

  /** Each conference's status callback: the first participant's, which created it, as Twilio uses. */
  const conferences = new Map<string, { readonly url: string; readonly events: ReadonlyArray<string> }>()

  /** A call enters a conference; its `join` is reported to the conference's status callback if it asks for it. */
  const enterConference = async (
    call: FakeCall,
    conference: ConferenceMarkup,
    engine: Parameters<CarrierDialect<TwilioExtra>["answer"]>[1],
    endsStream: boolean
  ) => {
    const url = conference.attributes.statusCallback
    if (!conferences.has(conference.room) && url) conferences.set(conference.room, { url, events: conference.events })
    engine.enterRoom(conference.room, call, { endsStream })
    const callback = conferences.get(conference.room)
    if (callback === undefined || !callback.events.includes("join")) return
    const conferenceSid = `CF${crypto.createHash("sha256").update(conference.room).digest("hex").slice(0, 32)}`
    await engine.deliver(
      callback.url,
      signedForm(authToken, callback.url, {
        AccountSid: accountSid,
        ConferenceSid: conferenceSid,
        FriendlyName: conference.room,
        CallSid: call.sid,
        StatusCallbackEvent: "participant-join",
        Muted: "false",
        Hold: "false",
        EndConferenceOnExit: conference.attributes.endConferenceOnExit ?? "false",
        StartConferenceOnEnter: conference.attributes.startConferenceOnEnter ?? "true"
      })
    )
  }

  const dialCallStatus = { answered: "completed", busy: "busy", "no-answer": "no-answer", failed: "failed" } as const

  const dialect: CarrierDialect<TwilioExtra> = {
    provider: "twilio",
    // Connection overrides: `rc` (retry count) defaults to 1, on connection failures (`rp=ct`);
    // `rt` (read timeout) and `tt` (total, retries included) default to 15 s, for every request.
    connectionRetries: 1,
    responseLimits: () => ({ attemptMs: 15_000, totalMs: 15_000, retryOnTimeout: false }),

    rest: async (request, engine) => {
      const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`
      const base = `/2010-04-01/Accounts/${accountSid}/Calls`
      if (request.headers.authorization !== expectedAuth) {
        return json(401, { code: 20003, message: "Authenticate", status: 401 })
      }
      if (request.method === "POST" && request.url.pathname === `${base}.json`) {
        const rejection = engine.takeRejection()
        if (rejection) {
          return json(rejection.status, { code: Number(rejection.code), message: "rejected", status: rejection.status })
        }
        const { params, single } = form(request.body)
        // Twilio needs To, From and the call's instructions (Url or Twiml); StatusCallback is optional.
        if (!single.To || !single.From || (!single.Url && !single.Twiml)) {
          return json(400, { code: 21201, message: "Missing required parameter", status: 400 })
        }
        if (single.Twiml !== undefined && (single.Twiml.length > 4000 || conferenceMarkup(single.Twiml) === null)) {
          return json(400, { code: 12100, message: "Document parse failure", status: 400 })
        }
        const ringTimeout = Number(single.Timeout ?? "60")
        if (!Number.isInteger(ringTimeout) || ringTimeout < 1 || ringTimeout > 600) {
          return json(400, { code: 21201, message: "Timeout must be an integer of at most 600", status: 400 })
        }
        if (engine.refusesCallerId(single.From)) {
          return json(400, {
            code: 21210,
            message: `The source phone number provided, ${single.From}, is not yet verified for your account.`,
            status: 400
          })
        }
        // Random like Twilio's, so sids never repeat across runs on a shared database.
        const sid = `CA${crypto.randomBytes(16).toString("hex")}`
        const call = engine.place({
          id: sid,
          to: single.To,
          from: single.From,
          machineDetection: params.get("MachineDetection") === "Enable" ||
            params.get("MachineDetection") === "DetectMessageEnd",
          timeLimitSeconds: single.TimeLimit ? Number(single.TimeLimit) : null,
          extra: {
            sid,
            answerUrl: single.Url ?? "",
            twiml: single.Twiml ?? null,
            statusCallback: single.StatusCallback ?? "",
            // Twilio posts only the events asked for with StatusCallbackEvent, `completed` when none is named.
            statusCallbackEvents: params.getAll("StatusCallbackEvent").length > 0
              ? params.getAll("StatusCallbackEvent")
              : ["completed"]
          }
        })
        await engine.replyDelay(call)
        return json(201, resource(call))
      }
      const match = new RegExp(`^${base}/(CA[0-9a-f]+)\\.json$`).exec(request.url.pathname)
      const call = match ? engine.find(match[1]!) : undefined
      if (!call) return json(404, { code: 20404, message: "Not found", status: 404 })
      if (request.method === "GET") return json(200, resource(call))
      if (request.method === "POST" && form(request.body).single.Twiml !== undefined) {
        if (call.status !== "in-progress") {
          return json(400, { code: 21220, message: "Call is not in-progress. Cannot redirect.", status: 400 })
        }
        const twiml = form(request.body).single.Twiml!
        if (twiml.length > 4000) {
          return json(400, { code: 21224, message: "Twiml must be at most 4000 characters", status: 400 })
        }
        const conference = conferenceMarkup(twiml)
        if (conference !== null) {
          // The new instructions replace the `<Connect><Stream>`: the stream ends, the call enters the conference.
          await enterConference(call, conference, engine, true)
          return json(200, resource(call))
        }
        const dial = dialMarkup(twiml)
        const timeout = Number(dial?.attributes.timeout ?? "30")
        if (dial === null || !Number.isInteger(timeout) || timeout < 5 || timeout > 600) {
          return json(400, { code: 12100, message: "Document parse failure", status: 400 })
        }
        dials.set(call.sid, dial)
        engine.transfer(call, { destination: dial.noun.text, timeoutSeconds: timeout, endsStream: true })
        return json(200, resource(call))
      }
      if (request.method === "POST") {
        const status = form(request.body).single.Status
        if (status === "completed" || status === "canceled") engine.hangUp(call)
        return json(200, resource(call))
      }
      return json(405, { message: "Method not allowed" })
    },

    report: async (call, step, engine) => {
      // One call's callbacks are posted one after the other, as Twilio sends them.
      const post = (status: string, extra: Record<string, string> = {}) => {
        const params = callbackParams(call, status, extra)
        const previous = posted.get(call.sid) ?? Promise.resolve()
        const delivered = previous.then(() =>
          engine.deliver(call.statusCallback, signedForm(authToken, call.statusCallback, params))
        )
        posted.set(call.sid, delivered)
        return delivered
      }
      const asked = (event: string) => call.statusCallbackEvents.includes(event)
      if (call.statusCallback === "") return
      // The verdict rides on the answered callback.
      if (step === "initiated" && asked("initiated")) await post("initiated")
      if (step === "ringing" && asked("ringing")) await post("ringing")
      if (step === "answered" && asked("answered")) await post("in-progress", answeredBy(call))
      if (step === "ended" && asked("completed")) {
        await post(call.status, { CallDuration: String(engine.talkSeconds(call)), ...answeredBy(call) })
      }
    },

    answer: async (call, engine) => {
      if (call.twiml !== null) {
        // Inline instructions: say what they say to the callee, then join their conference.
        const conference = conferenceMarkup(call.twiml)!
        call.heard.push(...conference.said)
        await enterConference(call, conference, engine, false)
        return null
      }
      // As Twilio does, the call proceeds only once the answer document has been fetched.
      const params = callbackParams(call, "in-progress", answeredBy(call))
      const { text } = await engine.deliver(call.answerUrl, signedForm(authToken, call.answerUrl, params))
      call.answerMarkup = text
      return twimlStream(text)
    },

    media: () => ({ twilioAuthToken: authToken, accountId: accountSid }),

    transferReport: async (call, transfer, step, engine) => {
      const dial = dials.get(call.sid)!
      const childSid = `CA${
        crypto.createHash("sha256").update(`${call.sid}:${transfer.destination}`).digest("hex").slice(0, 32)
      }`
      if (step === "answered") {
        const callback = dial.noun.attributes.statusCallback
        const events = (dial.noun.attributes.statusCallbackEvent ?? "").split(/\s+/)
        if (callback && events.includes("answered")) {
          await engine.deliver(
            callback,
            signedForm(authToken, callback, {
              AccountSid: accountSid,
              CallSid: childSid,
              ParentCallSid: call.sid,
              From: call.from,
              To: transfer.destination,
              Direction: "outbound-dial",
              CallStatus: "in-progress"
            })
          )
        }
        return "continues"
      }
      const action = dial.attributes.action
      // Without an action the call goes on to the next verb; there is none after the Dial here.
      if (!action) return "ends"
      const { text } = await engine.deliver(
        action,
        signedForm(authToken, action, {
          ...callbackParams(call, "in-progress"),
          DialCallSid: childSid,
          DialCallStatus: dialCallStatus[transfer.result!],
          DialCallDuration: transfer.result === "answered" ? "1" : "0"
        })
      )
      call.answerMarkup = text
      const stream = twimlStream(text)
      if (stream !== null) return { reconnect: stream }
      return endsTheCall(text) ? "ends" : "continues"
    }
  }

  const carrier = await startCarrierServer(dialect, options)
  return {
    ...carrier,
    accountSid,
    authToken,
    calls: () => carrier.calls() as ReadonlyArray<FakeCall>,
    /** The next `count` call creations fail with this HTTP status and Twilio error code. */
    rejectNextCalls: (count: number, status = 400, code = 21211) =>
      carrier.rejectNextCalls(count, status, String(code)),
    /** The `config` of a telephony configuration pointing at this carrier. */
    telephonyConfig: (settings: { readonly machineDetection?: boolean } = {}) => ({
      provider: "twilio",
      account_sid: accountSid,
      auth_token: authToken,
      amd_enabled: settings.machineDetection ?? false,
      api_base_url: carrier.url
    })
  }
}

export type FakeTwilio = Awaited<ReturnType<typeof startFakeTwilio>>
