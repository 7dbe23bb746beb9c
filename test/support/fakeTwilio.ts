import * as crypto from "node:crypto"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { twilioSignature } from "../../src/telephony/twilioSignature.ts"

/**
 * A loopback carrier that speaks Twilio's REST API for calls and sends signed status callbacks,
 * so the product's real Twilio adapter can be exercised end to end. Each call follows a script
 * chosen by the test from its `To` number.
 */

export type ScriptedOutcome = "completed" | "voicemail" | "busy" | "no-answer" | "failed" | "canceled"

export interface CallScript {
  /** What the call ends as, or "silent": the carrier never reports an end (lost callbacks). */
  readonly outcome: ScriptedOutcome | "silent"
  readonly ringMs?: number
  readonly talkMs?: number
}

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
}

export interface FakeTwilioOptions {
  readonly accountSid?: string
  readonly authToken?: string
  readonly script?: (call: { readonly to: string; readonly from: string }) => CallScript
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
  const script = options.script ?? (() => ({ outcome: "completed" as const }))
  const calls = new Map<string, FakeCall>()
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
    void postSigned(call.statusCallback, callbackParams(call, status, extra))
  }

  const run = (call: FakeCall, plan: CallScript) => {
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
      const call: FakeCall = {
        // Random like Twilio's, so sids never repeat across runs on a shared database.
        sid: `CA${crypto.randomBytes(16).toString("hex")}`,
        to: single.To,
        from: single.From,
        answerUrl: single.Url,
        statusCallback: single.StatusCallback,
        machineDetection: params.get("MachineDetection") === "Enable",
        createdAt: Date.now(),
        status: "queued",
        endedAt: null,
        answerMarkup: null,
        hungUpByApi: false
      }
      calls.set(call.sid, call)
      live++
      maxLive = Math.max(maxLive, live)
      run(call, script({ to: call.to, from: call.from }))
      return json(response, 201, resource(call))
    }
    const match = new RegExp(`^${base}/(CA[0-9a-f]+)\\.json$`).exec(url.pathname)
    const call = match ? calls.get(match[1]!) : undefined
    if (!call) return json(response, 404, { code: 20404, message: "Not found", status: 404 })
    if (request.method === "GET") return json(response, 200, resource(call))
    if (request.method === "POST") {
      if (form(body).single.Status === "completed" || form(body).single.Status === "canceled") {
        call.hungUpByApi = true
        end(call, call.status === "in-progress" ? "completed" : "canceled", { CallDuration: "0" })
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
    /** Ends a live call now with the given status, as if the far end hung up. */
    endCall: (sid: string, status = "completed") => {
      const call = calls.get(sid)
      if (call) end(call, status, { CallDuration: "1" })
    },
    postSigned,
    close: async () => {
      timers.forEach(clearTimeout)
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

export type FakeTwilio = Awaited<ReturnType<typeof startFakeTwilio>>
