import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { twilioSignature } from "../../src/telephony/twilioSignature.ts"
import { type CalleeScript, scriptLines } from "./calleeScript.ts"
import { type CalleeCall, type CalleeOptions, type CalleeReport, connectCallee } from "./fakeCallee.ts"
import { speak } from "./speechAudio.ts"
import { twimlStream } from "./twimlStream.ts"

/**
 * A loopback carrier that speaks Twilio's REST API for calls and sends signed status callbacks,
 * so the product's real Twilio adapter can be exercised end to end. Each call follows a script
 * chosen by the test from its `To` number.
 *
 * A call whose answer document connects a media stream (`<Connect><Stream>`) and whose callee has
 * a script (`calleeScript(to, …)` or the `callee` option) is answered by a loopback callee over
 * Twilio Media Streams; it lasts until the callee hangs up, the server closes the stream, or the
 * call is hung up over REST, and then reports `completed` with its real CallDuration. Without a
 * callee script a call just lasts `talkMs`, as before. As Twilio documents, the stream is opened
 * (and signed) without the `<Stream url>`'s query string, which Twilio does not support; only
 * `<Parameter>` values reach the server, in the `start` message (streamRequestUrl, carrierWire.ts).
 */

export type ScriptedOutcome = "completed" | "voicemail" | "busy" | "no-answer" | "failed" | "canceled"

export interface CallScript {
  /** What the call ends as, or "silent": the carrier never reports an end (lost callbacks), or "lost": no callback at all. */
  readonly outcome: ScriptedOutcome | "silent" | "lost"
  readonly ringMs?: number
  readonly talkMs?: number
  /** The REST reply that created the call arrives this much later (a slow network); the call's callbacks do not wait for it. */
  readonly replyDelayMs?: number
}

/** How the callee of a streamed call behaves (a CallScript outcome of "voicemail" makes it a machine for AMD). */
export type CalleeAnswer =
  & { readonly script: CalleeScript }
  & Pick<CalleeOptions, "speak" | "marksOnClear" | "maxDurationMs" | "audibleRms" | "burstGapMs">

export interface FakeCall {
  readonly sid: string
  readonly to: string
  readonly from: string
  readonly answerUrl: string
  readonly statusCallback: string
  readonly machineDetection: boolean
  readonly createdAt: number
  status: string
  endedAt: number | null
  answerMarkup: string | null
  hungUpByApi: boolean
  answeredAt: number | null
  /** The callee's media stream, once connected. */
  media: CalleeCall | null
  /** Why the media stream could not be opened (e.g. the server refused the upgrade). */
  mediaError: string | null
  /** The callee's recording when its media stream ends; null if the call had none. */
  readonly calleeDone: Promise<CalleeReport | null>
}

export interface FakeTwilioOptions {
  readonly accountSid?: string
  readonly authToken?: string
  readonly script?: (call: { readonly to: string; readonly from: string }) => CallScript
  /** The callee of streamed calls to numbers without their own `calleeScript`. */
  readonly callee?: (call: { readonly to: string; readonly from: string }) => CalleeScript | CalleeAnswer | undefined
}

const readBody = (request: http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => resolve(body))
    request.on("error", reject)
  })

const form = (body: string) => {
  const params = new URLSearchParams(body)
  const single: Record<string, string> = {}
  for (const key of new Set(params.keys())) single[key] = params.get(key)!
  return { params, single }
}

export const startFakeTwilio = async (options: FakeTwilioOptions = {}) => {
  const accountSid = options.accountSid ?? "AC00000000000000000000000000000001"
  const authToken = options.authToken ?? "fake-twilio-auth-token"
  const script = options.script ?? ((): CallScript => ({ outcome: "completed" }))
  const calls = new Map<string, FakeCall>()
  const calleeAnswers = new Map<string, CalleeAnswer>()
  const calleeDone = new Map<string, (report: CalleeReport | null) => void>()
  /** Calls whose callee is still connecting its media stream. */
  const connecting = new Set<string>()
  const timers = new Set<NodeJS.Timeout>()
  let rejectNext: Array<{ status: number; code: number }> = []
  let live = 0
  let maxLive = 0
  const callbackFailures: Array<string> = []

  const later = (ms: number, task: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer)
      task()
    }, ms)
    timers.add(timer)
  }

  /** POSTs a form signed as Twilio signs it; the product must accept it. */
  const postSigned = async (url: string, params: Record<string, string>) => {
    const body = new URLSearchParams(params).toString()
    try {
      const response = await fetch(url, {
        method: "POST",
        headers: {
          "content-type": "application/x-www-form-urlencoded",
          "x-twilio-signature": twilioSignature(authToken, url, params)
        },
        body
      })
      const text = await response.text()
      if (!response.ok) callbackFailures.push(`${url} → ${response.status} ${text}`)
      return { status: response.status, text }
    } catch (error) {
      callbackFailures.push(`${url} → ${(error as Error).message}`)
      return { status: 0, text: "" }
    }
  }

  const callbackParams = (call: FakeCall, status: string, extra: Record<string, string> = {}) => ({
    AccountSid: accountSid,
    CallSid: call.sid,
    From: call.from,
    To: call.to,
    Direction: "outbound-api",
    CallStatus: status,
    ...extra
  })

  const end = (call: FakeCall, status: string, extra: Record<string, string> = {}) => {
    if (call.endedAt !== null) return
    call.status = status
    call.endedAt = Date.now()
    live--
    if (call.media !== null) call.media.hangUp("carrier")
    else if (!connecting.has(call.sid)) calleeDone.get(call.sid)?.(null)
    void postSigned(call.statusCallback, callbackParams(call, status, extra))
  }

  const talkSeconds = (call: FakeCall) => String(Math.max(1, Math.round((Date.now() - (call.answeredAt ?? call.createdAt)) / 1000)))

  const calleeOf = (call: FakeCall): CalleeAnswer | undefined => {
    const answer = calleeAnswers.get(call.to) ?? options.callee?.({ to: call.to, from: call.from })
    return answer === undefined ? undefined : "script" in answer ? answer : { script: answer }
  }

  /** Twilio opens the stream (signing the URL as written) and the call lasts as long as it does. */
  const streamMedia = (call: FakeCall, url: string, parameters: Readonly<Record<string, string>>, answer: CalleeAnswer, ended: Record<string, string>) => {
    const completed = () => end(call, "completed", { CallDuration: talkSeconds(call), ...ended })
    connecting.add(call.sid)
    connectCallee({
      ...answer,
      // No TLS on loopback: connect in the clear, but sign the URL the answer document gave.
      url: url.replace(/^wss:/, "ws:"),
      signedUrl: url,
      provider: "twilio",
      twilioAuthToken: authToken,
      callId: call.sid,
      accountId: accountSid,
      parameters
    }).then(
      (media) => {
        connecting.delete(call.sid)
        call.media = media
        void media.done.then((report) => {
          calleeDone.get(call.sid)?.(report)
          completed()
        })
        if (call.endedAt !== null) media.hangUp("carrier")
      },
      (error: Error) => {
        connecting.delete(call.sid)
        call.mediaError = error.message
        calleeDone.get(call.sid)?.(null)
        completed()
      }
    )
  }

  const run = (call: FakeCall, plan: CallScript) => {
    if (plan.outcome === "lost") return
    void postSigned(call.statusCallback, callbackParams(call, "initiated"))
    if (plan.outcome === "silent") return
    const outcome = plan.outcome
    later(plan.ringMs ?? 20, () => {
      if (call.endedAt !== null) return
      if (outcome === "busy" || outcome === "no-answer" || outcome === "failed" || outcome === "canceled") {
        end(call, outcome, { CallDuration: "0" })
        return
      }
      call.status = "in-progress"
      const answeredBy = outcome === "voicemail" ? "machine_end_beep" : "human"
      const answered = callbackParams(call, "in-progress", call.machineDetection ? { AnsweredBy: answeredBy } : {})
      void postSigned(call.statusCallback, answered)
      // As Twilio does, the call proceeds only once the answer document has been fetched.
      void postSigned(call.answerUrl, answered).then(({ text }) => {
        call.answerMarkup = text
        call.answeredAt = Date.now()
        const stream = twimlStream(text)
        const answer = calleeOf(call)
        if (stream !== null && answer !== undefined && call.endedAt === null) {
          return streamMedia(call, stream.url, stream.parameters, answer, call.machineDetection ? { AnsweredBy: answeredBy } : {})
        }
        const talkMs = plan.talkMs ?? 30
        later(talkMs, () =>
          end(call, "completed", {
            CallDuration: String(Math.max(1, Math.round(talkMs / 1000))),
            ...(call.machineDetection ? { AnsweredBy: answeredBy } : {})
          }))
      })
    })
  }

  const json = (response: http.ServerResponse, status: number, body: unknown) => {
    response.writeHead(status, { "content-type": "application/json" })
    response.end(JSON.stringify(body))
  }

  const resource = (call: FakeCall) => ({
    sid: call.sid,
    account_sid: accountSid,
    to: call.to,
    from: call.from,
    status: call.status,
    duration: call.endedAt === null ? null : String(Math.round((call.endedAt - call.createdAt) / 1000)),
    answered_by: null
  })

  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://fake")
    const expectedAuth = `Basic ${Buffer.from(`${accountSid}:${authToken}`).toString("base64")}`
    const base = `/2010-04-01/Accounts/${accountSid}/Calls`
    if (request.headers.authorization !== expectedAuth) {
      return json(response, 401, { code: 20003, message: "Authenticate", status: 401 })
    }
    const body = await readBody(request)
    if (request.method === "POST" && url.pathname === `${base}.json`) {
      const rejection = rejectNext.shift()
      if (rejection) return json(response, rejection.status, { code: rejection.code, message: "rejected", status: rejection.status })
      const { params, single } = form(body)
      if (!single.To || !single.From || !single.Url || !single.StatusCallback) {
        return json(response, 400, { code: 21201, message: "Missing required parameter", status: 400 })
      }
      const sid = `CA${crypto.randomBytes(16).toString("hex")}`
      const call: FakeCall = {
        // Random like Twilio's, so sids never repeat across runs on a shared database.
        sid,
        to: single.To,
        from: single.From,
        answerUrl: single.Url,
        statusCallback: single.StatusCallback,
        machineDetection: params.get("MachineDetection") === "Enable",
        createdAt: Date.now(),
        status: "queued",
        endedAt: null,
        answerMarkup: null,
        hungUpByApi: false,
        answeredAt: null,
        media: null,
        mediaError: null,
        calleeDone: new Promise((resolve) => calleeDone.set(sid, resolve))
      }
      calls.set(call.sid, call)
      live++
      maxLive = Math.max(maxLive, live)
      const plan = script({ to: call.to, from: call.from })
      run(call, plan)
      if (plan.replyDelayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, plan.replyDelayMs))
      return json(response, 201, resource(call))
    }
    const match = new RegExp(`^${base}/(CA[0-9a-f]+)\\.json$`).exec(url.pathname)
    const call = match ? calls.get(match[1]!) : undefined
    if (!call) return json(response, 404, { code: 20404, message: "Not found", status: 404 })
    if (request.method === "GET") return json(response, 200, resource(call))
    if (request.method === "POST") {
      if (form(body).single.Status === "completed" || form(body).single.Status === "canceled") {
        call.hungUpByApi = true
        end(call, call.status === "in-progress" ? "completed" : "canceled", { CallDuration: call.media === null ? "0" : talkSeconds(call) })
      }
      return json(response, 200, resource(call))
    }
    json(response, 405, { message: "Method not allowed" })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo

  return {
    url: `http://127.0.0.1:${port}`,
    accountSid,
    authToken,
    calls: () => [...calls.values()],
    liveCalls: () => live,
    maxLiveCalls: () => maxLive,
    callbackFailures: () => [...callbackFailures],
    /** The next `count` call creations fail with this HTTP status and Twilio error code. */
    rejectNextCalls: (count: number, status = 400, code = 21211) => {
      rejectNext = [...rejectNext, ...Array.from({ length: count }, () => ({ status, code }))]
    },
    /** The callee of streamed calls to `to` (replaces the `callee` option for that number). */
    calleeScript: (to: string, answer: CalleeScript | CalleeAnswer) => {
      const plan = "script" in answer ? answer : { script: answer }
      calleeAnswers.set(to, plan)
      // Start rendering the lines now (cached), so the stream opens promptly once the call is answered.
      for (const line of scriptLines(plan.script)) (plan.speak ?? speak)(line, 8000).catch(() => {})
    },
    /** Ends a live call now with the given status, as if the far end hung up. */
    endCall: (sid: string, status = "completed") => {
      const call = calls.get(sid)
      if (call) end(call, status, { CallDuration: "1" })
    },
    postSigned,
    close: async () => {
      timers.forEach(clearTimeout)
      for (const call of calls.values()) call.media?.hangUp("carrier")
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export type FakeTwilio = Awaited<ReturnType<typeof startFakeTwilio>>
