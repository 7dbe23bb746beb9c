import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { type CalleeScript, scriptLines } from "./calleeScript.ts"
import type { CarrierProvider } from "./carrierWire.ts"
import { type CalleeCall, type CalleeOptions, type CalleeReport, connectCallee } from "./fakeCallee.ts"
import { speak } from "./speechAudio.ts"

/**
 * What every loopback carrier (fakeTwilio, fakeVonage, fakeTelnyx, fakePlivo) shares: an HTTP
 * server on 127.0.0.1, and calls that ring, are answered, stream their media to a scripted callee
 * and end, each step reported through the carrier's own dialect (its REST routes, ids, status
 * words and signed callbacks). The test chooses each call's script from its `To` number.
 *
 * A call whose answer connects a media stream, and whose callee has a script (`calleeScript(to,
 * …)` or the `callee` option), is answered by a loopback callee over that carrier's media protocol
 * (fakeCallee.ts); it lasts until the callee hangs up, the server closes the stream, the call is
 * hung up over REST or reaches the time limit it was placed with, and then ends `completed`.
 * Without a callee script a call just lasts `talkMs`.
 */

export type ScriptedOutcome = "completed" | "voicemail" | "busy" | "no-answer" | "failed" | "canceled"

export interface CallScript {
  /** What the call ends as, or "silent": the carrier never reports an end (lost callbacks), or "lost": no callback at all. */
  readonly outcome: ScriptedOutcome | "silent" | "lost"
  readonly ringMs?: number
  readonly talkMs?: number
  /** The REST reply that created the call arrives this much later (a slow network); the call's callbacks do not wait for it. */
  readonly replyDelayMs?: number
  /** Once answered without a media stream, the call stays up until it is hung up or its conference ends (a person on the line). */
  readonly holdsLine?: boolean
}

/** How the callee of a streamed call behaves (a CallScript outcome of "voicemail" makes it a machine for AMD). */
export type CalleeAnswer =
  & { readonly script: CalleeScript }
  & Pick<CalleeOptions, "speak" | "marksOnClear" | "maxDurationMs" | "audibleRms" | "burstGapMs">

/** How a call ended, in words every dialect translates into its own. */
export type EndStatus = "completed" | "busy" | "no-answer" | "failed" | "canceled"

/** What a transfer's destination does when the carrier rings it, as the test scripts it (`destinationScript`). */
export type DestinationBehaviour = "answers" | "busy" | "no-answer" | "fails"

/** How the ringing of a transfer's destination ended, in words every dialect translates into its own. */
export type TransferResultWord = "answered" | "busy" | "no-answer" | "failed"

/** One transfer of a call, as the carrier was asked for it and as it went. */
export interface LoopbackTransfer {
  /** The destination as the carrier was given it (a number in the carrier's own form, or a SIP URI). */
  readonly destination: string
  readonly timeoutSeconds: number
  /** Null while the destination rings. */
  result: TransferResultWord | null
}

/** A step of a transfer the dialect reports: the destination answered, or the dial is over (with its result). */
export type TransferStep = "answered" | "over"

export interface LoopbackCall {
  /** The carrier's id of the live call: what hanging up and status lookups take. */
  readonly id: string
  /** The id the placement answered: the same as `id` except where the carrier says otherwise (Plivo's request_uuid). */
  readonly placementId: string
  readonly to: string
  readonly from: string
  readonly machineDetection: boolean
  /** Seconds after the answer at which the carrier ends the call, as the placement asked. */
  readonly timeLimitSeconds: number | null
  readonly createdAt: number
  status: "queued" | "ringing" | "in-progress" | EndStatus
  answeredAt: number | null
  /** Answering-machine detection's verdict, once the call was answered with detection on. */
  answeredBy: "human" | "machine" | null
  endedAt: number | null
  /** Who or what ended the call. */
  endedBy: "far-end" | "api" | "time-limit" | "stream" | "transfer" | null
  /** The transfers the call was asked for, in order. */
  readonly transfers: Array<LoopbackTransfer>
  /** The answer document the product returned. */
  answerMarkup: string | null
  /** The media stream URL the carrier was asked to open, from the answer or the placement. */
  streamUrl: string | null
  hungUpByApi: boolean
  /** The callee's media stream, once connected. */
  media: CalleeCall | null
  /** Why the media stream could not be opened (e.g. the server refused the upgrade). */
  mediaError: string | null
  /** The callee's recording when its media stream ends; null if the call had none. */
  readonly calleeDone: Promise<CalleeReport | null>
  /** What the carrier said to the callee itself (`<Say>`, `speak`, NCCO `talk`), in order. */
  readonly heard: Array<string>
  /** The call it was joined with (a conference or bridge), once it was. */
  joinedWith: string | null
}

/** A step of a call, which each dialect reports (or not) with its callbacks. */
type CallStep = "initiated" | "ringing" | "answered" | "machine-verdict" | "ended"

/** The media stream an answer asks for. */
export interface StreamTarget {
  /** As the carrier was given it (what it connects to and, for Twilio, signs). */
  readonly url: string
  readonly parameters: Readonly<Record<string, string>>
  /** Why this carrier would not open it (a content type it does not support, …). */
  readonly refusal?: string
  /** The carrier hangs up as soon as the stream has started (Plivo without keepCallAlive). */
  readonly endsCallAtStart?: boolean
}

interface RestRequest {
  readonly method: string
  readonly url: URL
  readonly headers: http.IncomingHttpHeaders
  readonly body: string
}

export interface RestReply {
  readonly status: number
  readonly body?: unknown
}

export interface CarrierDialect<Extra extends object> {
  readonly provider: Exclude<CarrierProvider, "browser">
  /**
   * How many times the carrier sends a callback again when it could not get an answer through
   * (the connection refused, reset or closed before any response), as its documentation says:
   * a stand-in that gave up at once would lose callbacks the real carrier delivers.
   */
  readonly connectionRetries: number
  /**
   * How long the carrier waits for the product's answer to a request of each kind, per attempt and
   * for all attempts together, and whether an attempt that timed out is sent again (within the
   * retries above), as its documentation says; none where it documents no limit. A product that
   * answers later has failed at the real carrier: the call fails, or the callback is lost.
   */
  readonly responseLimits?: (kind: DeliveryKind) => ResponseLimits
  /** Answers one REST request, placing, finding and hanging up calls through the engine. */
  readonly rest: (request: RestRequest, engine: CarrierEngine<Extra>) => Promise<RestReply>
  /** Reports a step with the carrier's signed callbacks; resolves once they are delivered. */
  readonly report: (call: LoopbackCall & Extra, step: CallStep, engine: CarrierEngine<Extra>) => Promise<void>
  /** Once answered: fetches the call's instructions, and says which media stream to open, if any. */
  readonly answer: (call: LoopbackCall & Extra, engine: CarrierEngine<Extra>) => Promise<StreamTarget | null>
  /** What the carrier's media connection carries besides the URL (ids, Twilio's signing token). */
  readonly media?: (call: LoopbackCall & Extra) => Partial<CalleeOptions>
  /**
   * Reports a transfer's progress with the carrier's callbacks; at `over`, says whether the call
   * ends (the instructions it runs are done) or goes on with the agent's stream.
   */
  readonly transferReport?: (
    call: LoopbackCall & Extra,
    transfer: LoopbackTransfer,
    step: TransferStep,
    engine: CarrierEngine<Extra>
  ) => Promise<TransferNext>
}

/** What a call does once a transfer's dial is over: ends, goes on as it was, or connects the caller to a new stream. */
export type TransferNext = "ends" | "continues" | { readonly reconnect: StreamTarget }

/** A caller back with the agent after a transfer that was not answered listens to it, then hangs up. */
const RETURNED_CALLER: CalleeScript = [{ waitForAgent: { quietMs: 1200, timeoutMs: 10_000 } }, { hangUp: true }]

interface Placement<Extra extends object> {
  readonly id: string
  readonly placementId?: string
  readonly to: string
  readonly from: string
  readonly machineDetection: boolean
  readonly timeLimitSeconds: number | null
  readonly extra: Extra
}

export interface StandInOptions {
  readonly script?: (call: { readonly to: string; readonly from: string }) => CallScript
  /** The callee of streamed calls to numbers without their own `calleeScript`. */
  readonly callee?: (call: { readonly to: string; readonly from: string }) => CalleeScript | CalleeAnswer | undefined
}

/** How a callback the product did not answer in time is recorded among the failures. */
export const TIMED_OUT = "no answer within the carrier's time limit"

/** The answer document (instructions for the call) or any other callback. */
export type DeliveryKind = "answer" | "callback"

export interface ResponseLimits {
  readonly attemptMs: number
  readonly totalMs: number
  readonly retryOnTimeout: boolean
}

/** A callback as delivered: what the product answered. */
interface Delivery {
  readonly status: number
  readonly text: string
}

/** What a dialect drives: the calls and their callbacks. */
interface CarrierEngine<Extra extends object> {
  readonly place: (placement: Placement<Extra>) => LoopbackCall & Extra
  readonly find: (id: string) => (LoopbackCall & Extra) | undefined
  readonly findBy: (predicate: (call: LoopbackCall & Extra) => boolean) => (LoopbackCall & Extra) | undefined
  /** Sends a callback; anything but a 2xx is recorded as a failure the product caused. */
  readonly deliver: (
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string },
    kind?: DeliveryKind
  ) => Promise<Delivery>
  /** Seconds the call has been connected, at least one once answered (carriers round up). */
  readonly talkSeconds: (call: LoopbackCall) => number
  /** Whether the account may not place calls from this number (see `unverifyCallerId`). */
  readonly refusesCallerId: (from: string) => boolean
  /** The next refusal queued by `rejectNextCalls`, if any. */
  readonly takeRejection: () => { readonly status: number; readonly code: string } | undefined
  /** Waits as long as the call's script delays the placement's reply. */
  readonly replyDelay: (call: LoopbackCall) => Promise<void>
  /** Ends the call as hung up over REST: completed once answered, canceled before. */
  readonly hangUp: (call: LoopbackCall & Extra) => void
  /**
   * Starts a transfer the carrier accepted: `endsStream` when the call's new instructions replace
   * the ones running the agent's media stream (the carrier closes it); the destination then rings
   * and behaves as scripted, and the dialect reports each step.
   */
  readonly transfer: (
    call: LoopbackCall & Extra,
    transfer: { readonly destination: string; readonly timeoutSeconds: number; readonly endsStream: boolean }
  ) => LoopbackTransfer
  /**
   * Puts a live call into the conference `room` (a bridge is a room of two): once two calls are in
   * it they talk, and a while later the conversation ends and both calls with it. A call entering
   * a room leaves its media stream (`endsStream`: the carrier closes it). Answers the calls already
   * in it.
   */
  readonly enterRoom: (
    room: string,
    call: LoopbackCall & Extra,
    options: { readonly endsStream: boolean }
  ) => ReadonlyArray<LoopbackCall & Extra>
}

const readBody = (request: http.IncomingMessage) =>
  new Promise<string>((resolve, reject) => {
    let body = ""
    request.setEncoding("utf8")
    request.on("data", (chunk) => (body += chunk))
    request.on("end", () => resolve(body))
    request.on("error", reject)
  })

const makeEngine = <Extra extends object>(dialect: CarrierDialect<Extra>, options: StandInOptions) => {
  type Call = LoopbackCall & Extra
  const script = options.script ?? ((): CallScript => ({ outcome: "completed" }))
  const calls = new Map<string, Call>()
  const plans = new Map<string, CallScript>()
  const calleeAnswers = new Map<string, CalleeAnswer>()
  const calleeDone = new Map<string, (report: CalleeReport | null) => void>()
  /** Calls whose callee is still connecting its media stream. */
  const connecting = new Set<string>()
  const timers = new Set<NodeJS.Timeout>()
  const callbackFailures: Array<string> = []
  /** Callbacks whose connection failed and which were sent again (what a carrier's request log shows). */
  const callbackRetries: Array<string> = []
  /** When each callback was sent and how long the product took to answer it, for benchmarks. */
  const callbackTimes: Array<{ readonly url: string; readonly sentAt: number; readonly ms: number }> = []
  let rejectNext: Array<{ status: number; code: string }> = []
  const unverified = new Set<string>()
  const destinations = new Map<string, DestinationBehaviour>()
  /** The calls in each conference room. */
  const rooms = new Map<string, Array<Call>>()
  /** Calls whose agent stream the carrier closed for a transfer: its end is not the call's. */
  const handedOver = new Set<string>()
  /** How many media streams each call has opened. */
  const streams = new Map<string, number>()
  const digitsOf = (number: string) => number.replace(/^\+/, "")
  let live = 0
  let maxLive = 0

  const later = (ms: number, task: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer)
      task()
    }, ms)
    timers.add(timer)
  }

  const deliver = async (
    url: string,
    init: { method: string; headers: Record<string, string>; body?: string },
    kind: DeliveryKind = "callback"
  ): Promise<Delivery> => {
    const sentAt = Date.now()
    const limits = dialect.responseLimits?.(kind)
    for (let retriesLeft = dialect.connectionRetries;; retriesLeft--) {
      const attemptMs = limits && Math.min(limits.attemptMs, limits.totalMs - (Date.now() - sentAt))
      try {
        const response = await fetch(url, {
          ...init,
          ...(attemptMs === undefined ? {} : { signal: AbortSignal.timeout(Math.max(1, attemptMs)) })
        })
        const text = await response.text()
        callbackTimes.push({ url, sentAt, ms: Date.now() - sentAt })
        if (!response.ok) callbackFailures.push(`${url} → ${response.status} ${text.slice(0, 200)}`)
        return { status: response.status, text }
      } catch (error) {
        const timedOut = (error as Error).name === "TimeoutError"
        const cause = (error as Error & { cause?: { code?: string; message?: string } }).cause
        const failure = timedOut
          ? `${url} → ${TIMED_OUT} after ${attemptMs} ms`
          : `${url} → ${(error as Error).message}${cause ? ` (${cause.code ?? cause.message})` : ""}`
        const withinTotal = limits === undefined || Date.now() - sentAt < limits.totalMs
        if (retriesLeft > 0 && withinTotal && (!timedOut || limits?.retryOnTimeout)) {
          callbackRetries.push(failure)
          continue
        }
        callbackFailures.push(failure)
        return { status: 0, text: "" }
      }
    }
  }

  const report = (call: Call, step: CallStep) => void dialect.report(call, step, engine as CarrierEngine<Extra>)

  const talkSeconds = (call: LoopbackCall) =>
    call.answeredAt === null ? 0 : Math.max(1, Math.round(((call.endedAt ?? Date.now()) - call.answeredAt) / 1000))

  const end = (call: Call, status: EndStatus, by: NonNullable<LoopbackCall["endedBy"]>) => {
    if (call.endedAt !== null) return
    call.status = status
    call.endedAt = Date.now()
    call.endedBy = by
    live--
    if (call.media !== null) call.media.hangUp("carrier")
    else if (!connecting.has(call.id)) calleeDone.get(call.id)?.(null)
    report(call, "ended")
  }

  const calleeOf = (call: Call): CalleeAnswer | undefined => {
    const answer = calleeAnswers.get(call.to) ?? options.callee?.({ to: call.to, from: call.from })
    return answer === undefined ? undefined : "script" in answer ? answer : { script: answer }
  }

  /** The carrier opens the stream, and the call lasts as long as it does. */
  const streamMedia = (call: Call, stream: StreamTarget, answer: CalleeAnswer) => {
    connecting.add(call.id)
    // A call back from a transfer streams again: only its latest stream's end is the call's.
    const generation = (streams.get(call.id) ?? 0) + 1
    streams.set(call.id, generation)
    connectCallee({
      ...answer,
      // No TLS on loopback: connect in the clear, as the answer gave the URL otherwise.
      url: stream.url.replace(/^wss:/, "ws:"),
      signedUrl: stream.url,
      provider: dialect.provider,
      callId: call.id,
      parameters: stream.parameters,
      ...dialect.media?.(call)
    }).then(
      (media) => {
        connecting.delete(call.id)
        call.media = media
        void media.done.then((report) => {
          calleeDone.get(call.id)?.(report)
          if (streams.get(call.id) !== generation) return
          // The caller was handed to a transfer's destination: the agent's stream ending leaves the call up.
          if (handedOver.has(call.id) || call.transfers.some((transfer) => transfer.result === "answered")) return
          end(call, "completed", report.endedBy === "server" ? "stream" : "far-end")
        })
        if (call.endedAt !== null) media.hangUp("carrier")
        else if (stream.endsCallAtStart) end(call, "completed", "stream")
      },
      (error: Error) => {
        connecting.delete(call.id)
        call.mediaError = error.message
        calleeDone.get(call.id)?.(null)
        end(call, "completed", "stream")
      }
    )
  }

  const answered = async (call: Call, plan: CallScript) => {
    call.status = "in-progress"
    call.answeredAt = Date.now()
    if (call.machineDetection) call.answeredBy = plan.outcome === "voicemail" ? "machine" : "human"
    if (call.timeLimitSeconds !== null) later(call.timeLimitSeconds * 1000, () => end(call, "completed", "time-limit"))
    report(call, "answered")
    // Detection listens to the first words after the answer before it decides.
    if (call.machineDetection) later(50, () => call.endedAt === null && report(call, "machine-verdict"))
    const stream = await dialect.answer(call, engine as CarrierEngine<Extra>)
    const answer = calleeOf(call)
    if (stream !== null) call.streamUrl = stream.url
    if (call.endedAt !== null) return
    if (stream !== null && stream.refusal !== undefined) {
      call.mediaError = stream.refusal
      return end(call, "failed", "stream")
    }
    if (stream !== null && answer !== undefined) return streamMedia(call, stream, answer)
    if (plan.holdsLine) return
    later(plan.talkMs ?? 30, () => end(call, "completed", "far-end"))
  }

  const run = (call: Call, plan: CallScript) => {
    if (plan.outcome === "lost") return
    call.status = "ringing"
    report(call, "initiated")
    if (plan.outcome === "silent") return
    report(call, "ringing")
    const outcome = plan.outcome
    later(plan.ringMs ?? 20, () => {
      if (call.endedAt !== null) return
      if (outcome === "busy" || outcome === "no-answer" || outcome === "failed" || outcome === "canceled") {
        return end(call, outcome, "far-end")
      }
      void answered(call, plan)
    })
  }

  /** How long a transfer's destination rings before it answers or refuses (a no-answer gives up as soon: time is compressed). */
  const TRANSFER_RING_MS = 60
  /** How long a caller handed to the destination talks with it before the bridged call ends. */
  const BRIDGE_MS = 150

  const transfer = (
    call: Call,
    asked: { readonly destination: string; readonly timeoutSeconds: number; readonly endsStream: boolean }
  ): LoopbackTransfer => {
    const record: LoopbackTransfer = {
      destination: asked.destination,
      timeoutSeconds: asked.timeoutSeconds,
      result: null
    }
    call.transfers.push(record)
    if (asked.endsStream) {
      handedOver.add(call.id)
      call.media?.hangUp("carrier")
    }
    const behaviour = destinations.get(asked.destination) ?? "answers"
    const report = (step: TransferStep): Promise<TransferNext> =>
      dialect.transferReport?.(call, record, step, engine as CarrierEngine<Extra>) ?? Promise.resolve("ends" as const)
    later(TRANSFER_RING_MS, () => {
      if (call.endedAt !== null) {
        // The caller hung up while it rang: the dial is over, the destination never reached.
        record.result = "failed"
        void report("over")
        return
      }
      record.result = behaviour === "answers"
        ? "answered"
        : behaviour === "busy"
        ? "busy"
        : behaviour === "no-answer"
        ? "no-answer"
        : "failed"
      if (record.result === "answered") {
        void report("answered").then(() =>
          later(BRIDGE_MS, () => void report("over").then(() => end(call, "completed", "transfer")))
        )
        return
      }
      void report("over").then((next) => {
        if (next === "ends") return end(call, "completed", "transfer")
        if (next === "continues" || call.endedAt !== null) return
        // The call's next instructions connect the caller back to the agent: a new stream.
        handedOver.delete(call.id)
        call.streamUrl = next.reconnect.url
        if (next.reconnect.refusal !== undefined) {
          call.mediaError = next.reconnect.refusal
          return end(call, "failed", "stream")
        }
        streamMedia(call, next.reconnect, { script: RETURNED_CALLER })
      })
    })
    return record
  }

  const enterRoom = (room: string, call: Call, options: { readonly endsStream: boolean }) => {
    const present = rooms.get(room) ?? []
    rooms.set(room, [...present, call])
    // Its stream with whoever it talked to is over: that stream's end is not the call's.
    handedOver.add(call.id)
    if (options.endsStream) call.media?.hangUp("carrier")
    const other = present.find((candidate) => candidate.endedAt === null)
    if (other !== undefined) {
      call.joinedWith = other.id
      other.joinedWith = call.id
      later(BRIDGE_MS, () => {
        end(call, "completed", "transfer")
        end(other, "completed", "transfer")
      })
    }
    return present
  }

  /** What a warm transfer's destination does when its call rings, as a call script. */
  const destinationPlan = (behaviour: DestinationBehaviour): CallScript => ({
    outcome: behaviour === "answers"
      ? "completed"
      : behaviour === "busy"
      ? "busy"
      : behaviour === "no-answer"
      ? "no-answer"
      : "failed",
    ringMs: TRANSFER_RING_MS,
    holdsLine: true
  })

  /** Creates a call as the carrier accepted it, and runs its script. */
  const place = (placement: Placement<Extra>): Call => {
    let done!: (report: CalleeReport | null) => void
    const call = {
      ...placement.extra,
      id: placement.id,
      placementId: placement.placementId ?? placement.id,
      to: placement.to,
      from: placement.from,
      machineDetection: placement.machineDetection,
      timeLimitSeconds: placement.timeLimitSeconds,
      createdAt: Date.now(),
      status: "queued",
      answeredAt: null,
      answeredBy: null,
      endedAt: null,
      endedBy: null,
      answerMarkup: null,
      streamUrl: null,
      hungUpByApi: false,
      media: null,
      mediaError: null,
      transfers: [],
      heard: [],
      joinedWith: null,
      calleeDone: new Promise<CalleeReport | null>((resolve) => (done = resolve))
    } as Call
    calleeDone.set(call.id, done)
    calls.set(call.id, call)
    live++
    maxLive = Math.max(maxLive, live)
    // A number scripted as a transfer's destination is a person the warm transfer's own call rings.
    const behaviour = destinations.get(call.to)
    const plan = behaviour === undefined ? script({ to: call.to, from: call.from }) : destinationPlan(behaviour)
    plans.set(call.id, plan)
    run(call, plan)
    return call
  }

  const engine = {
    place,
    deliver,
    talkSeconds,
    find: (id: string) => calls.get(id),
    findBy: (predicate: (call: Call) => boolean) => [...calls.values()].find(predicate),
    takeRejection: () => rejectNext.shift(),
    refusesCallerId: (from: string) => unverified.has(digitsOf(from)),
    replyDelay: (call: LoopbackCall) =>
      new Promise<void>((resolve) => setTimeout(resolve, plans.get(call.id)?.replyDelayMs ?? 0)),
    hangUp: (call: Call) => {
      if (call.endedAt !== null) return
      call.hungUpByApi = true
      end(call, call.status === "in-progress" ? "completed" : "canceled", "api")
    },
    transfer,
    enterRoom,
    /** What a transfer's destination does when rung (default: it answers). */
    destinationScript: (destination: string, behaviour: DestinationBehaviour) => {
      destinations.set(destination, behaviour)
    },
    end,
    calls: () => [...calls.values()],
    liveCalls: () => live,
    maxLiveCalls: () => maxLive,
    callbackFailures: () => [...callbackFailures],
    callbackRetries: () => [...callbackRetries],
    callbackTimes: () => [...callbackTimes],
    /** The next `count` call creations are refused with this HTTP status and carrier error code. */
    rejectNextCalls: (count: number, status: number, code: string) => {
      rejectNext = [...rejectNext, ...Array.from({ length: count }, () => ({ status, code }))]
    },
    /** Calls placed from this number are refused as the carrier refuses a caller ID the account may not use. */
    unverifyCallerId: (from: string) => {
      unverified.add(digitsOf(from))
    },
    /** The callee of streamed calls to `to` (replaces the `callee` option for that number). */
    calleeScript: (to: string, answer: CalleeScript | CalleeAnswer) => {
      const plan = "script" in answer ? answer : { script: answer }
      calleeAnswers.set(to, plan)
      // Start rendering the lines now (cached), so the stream opens promptly once the call is answered.
      for (const line of scriptLines(plan.script)) (plan.speak ?? speak)(line, 8000).catch(() => {})
    },
    /** Ends a live call now with the given status, as if the far end hung up. */
    endCall: (id: string, status: EndStatus = "completed") => {
      const call = calls.get(id)
      if (call) end(call, status, "far-end")
    },
    stop: () => {
      timers.forEach(clearTimeout)
      for (const call of calls.values()) call.media?.hangUp("carrier")
    }
  }
  return engine
}

/** Starts a loopback carrier speaking `dialect` on 127.0.0.1. */
export const startCarrierServer = async <Extra extends object>(
  dialect: CarrierDialect<Extra>,
  options: StandInOptions = {}
) => {
  const engine = makeEngine(dialect, options)
  const server = http.createServer(async (request, response) => {
    const reply = await dialect.rest({
      method: request.method ?? "GET",
      url: new URL(request.url ?? "/", "http://carrier.test"),
      headers: request.headers,
      body: await readBody(request)
    }, engine).catch((error: Error): RestReply => ({ status: 500, body: { message: error.message } }))
    if (reply.body === undefined) {
      response.writeHead(reply.status).end()
      return
    }
    response.writeHead(reply.status, { "content-type": "application/json" })
    response.end(JSON.stringify(reply.body))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    provider: dialect.provider,
    url: `http://127.0.0.1:${port}`,
    find: engine.find,
    calls: engine.calls,
    liveCalls: engine.liveCalls,
    maxLiveCalls: engine.maxLiveCalls,
    callbackFailures: engine.callbackFailures,
    callbackRetries: engine.callbackRetries,
    callbackTimes: engine.callbackTimes,
    rejectNextCalls: engine.rejectNextCalls,
    unverifyCallerId: engine.unverifyCallerId,
    calleeScript: engine.calleeScript,
    destinationScript: engine.destinationScript,
    endCall: engine.endCall,
    close: async () => {
      engine.stop()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
