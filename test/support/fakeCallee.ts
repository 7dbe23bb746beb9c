import * as crypto from "node:crypto"
import { performance } from "node:perf_hooks"
import WebSocket from "ws"
import { type CalleeScript, type CalleeStep, scriptLines } from "./calleeScript.ts"
import {
  type AgentMessage,
  type CarrierProvider,
  carrierWire,
  streamRequestUrl,
  type WireMessage
} from "./carrierWire.ts"
import { handsetPlayout, type PlayoutMark } from "./handsetPlayout.ts"
import { speak as espeak } from "./speechAudio.ts"

/**
 * The callee's end of a phone line, as a carrier's media stream client: it connects to a media URL
 * the way the provider would, sends the callee's side in 20 ms frames paced against an absolute
 * deadline (so it never drifts), follows a script (calleeScript.ts), and plays the agent's audio
 * out at real time like a handset (handsetPlayout.ts: marks answered after play-out, clear).
 *
 * Everything is recorded on the callee's clock (milliseconds since the stream started): both
 * tracks frame-aligned, the agent's audible bursts, barge-ins and the clears that answered them.
 */

export interface CalleeOptions {
  /** The stream URL as the carrier was given it (ws://127.0.0.1:…); opened as the provider documents (streamRequestUrl). */
  readonly url: string
  readonly provider: CarrierProvider
  readonly script: CalleeScript
  /** Twilio signs the upgrade with X-Twilio-Signature when given its account's auth token. */
  readonly twilioAuthToken?: string
  /** The URL the carrier signs: the stream URL exactly as the answer document wrote it (default `url`). */
  readonly signedUrl?: string
  readonly callId?: string
  readonly streamId?: string
  readonly accountId?: string
  /** Custom parameters (Twilio `<Parameter>`, Telnyx custom_parameters, Vonage headers, Plivo extraHeaders). */
  readonly parameters?: Readonly<Record<string, string>>
  readonly headers?: Readonly<Record<string, string>>
  /** Speech for `say` lines (default: eSpeak NG through speechAudio.ts). */
  readonly speak?: (text: string, sampleRate: number) => Promise<Int16Array>
  /** Marks pending when a clear arrives: answered at once (default, as Twilio and Telnyx do) or never. */
  readonly marksOnClear?: "echo" | "drop"
  /** Send every Nth media frame after the one following it (Telnyx does not guarantee order). */
  readonly reorderEvery?: number
  /**
   * The agent's audio leaks back into the callee's microphone (a speakerphone, a carrier's line
   * echo): what the callee heard `delayMs` earlier, scaled by `gain`, is added to what it sends.
   */
  readonly echo?: { readonly gain: number; readonly delayMs: number }
  /** The callee hangs up after this long whatever the script says (default 120 s). */
  readonly maxDurationMs?: number
  /** Frame RMS at or above which agent audio counts as audible (default 300, about -40 dBFS). */
  readonly audibleRms?: number
  /** Quiet shorter than this does not end an agent burst (default 300 ms: pauses between words). */
  readonly burstGapMs?: number
}

export interface CalleeReport {
  readonly provider: CarrierProvider
  readonly sampleRate: number
  /** What the callee said, one frame per 20 ms from the stream's start. */
  readonly callee: Int16Array
  /** What the callee heard: agent audio as played out, aligned with `callee`. */
  readonly agent: Int16Array
  readonly agentBursts: ReadonlyArray<{ readonly startMs: number; readonly endMs: number }>
  /** Arrival of each agent audio message (before play-out). */
  readonly agentMedia: ReadonlyArray<{ readonly atMs: number; readonly samples: number }>
  readonly utterances: ReadonlyArray<{ readonly text: string; readonly startMs: number; readonly endMs: number | null }>
  readonly bargeIns: ReadonlyArray<{
    readonly text: string
    readonly speechStartMs: number
    /** The first clear after the callee started speaking over the agent. */
    readonly clearAtMs: number | null
    /** When the agent burst the callee spoke over ended (null while it goes on). */
    readonly agentStoppedAtMs: number | null
  }>
  readonly clears: ReadonlyArray<
    { readonly atMs: number; readonly droppedMs: number; readonly sinceBargeInMs: number | null }
  >
  readonly marks: ReadonlyArray<PlayoutMark>
  readonly dtmf: ReadonlyArray<{ readonly digit: string; readonly atMs: number }>
  /** Browser calls: the conversation's progress events as received, with their arrival. */
  readonly progress: ReadonlyArray<{ readonly atMs: number; readonly event: Record<string, any> }>
  readonly timeouts: ReadonlyArray<{ readonly step: number; readonly atMs: number }>
  readonly protocolErrors: ReadonlyArray<{ readonly atMs: number; readonly reason: string }>
  /** Who ended the stream: the callee (script or hang-up), the carrier (the call ended), or the server. */
  readonly endedBy: "callee" | "carrier" | "server" | null
  readonly serverClosed: boolean
  readonly closeCode: number | null
  readonly durationMs: number
}

export interface CalleeCall {
  readonly done: Promise<CalleeReport>
  readonly report: () => CalleeReport
  /** Ends the stream from the carrier's side (e.g. the call was hung up over REST). */
  readonly hangUp: (by?: "callee" | "carrier") => void
}

/** The media URL refused the upgrade (bad token, bad signature, unknown run). */
export class CalleeRefused extends Error {
  readonly status: number
  readonly body: string
  constructor(status: number, body: string) {
    super(`media stream refused with HTTP ${status}: ${body}`)
    this.status = status
    this.body = body
  }
}

const FRAME_MS = 20

const rms = (frame: Int16Array) => {
  let sum = 0
  for (const sample of frame) sum += sample * sample
  return Math.sqrt(sum / frame.length)
}

const concat = (frames: ReadonlyArray<Int16Array>) => {
  const out = new Int16Array(frames.reduce((length, frame) => length + frame.length, 0))
  let offset = 0
  for (const frame of frames) {
    out.set(frame, offset)
    offset += frame.length
  }
  return out
}

const twilioStreamSignature = (authToken: string, url: string) =>
  crypto.createHmac("sha1", authToken).update(url, "utf8").digest("base64")

const bytesOf = (data: WebSocket.RawData): Uint8Array =>
  Array.isArray(data) ? Buffer.concat(data) : data instanceof ArrayBuffer ? new Uint8Array(data) : data

export const connectCallee = async (options: CalleeOptions): Promise<CalleeCall> => {
  const provider = options.provider
  const wire = carrierWire(provider, {
    callId: options.callId ??
      (provider === "twilio" ? `CA${crypto.randomBytes(16).toString("hex")}` : crypto.randomUUID()),
    streamId: options.streamId ??
      (provider === "twilio" ? `MZ${crypto.randomBytes(16).toString("hex")}` : crypto.randomUUID()),
    accountId: options.accountId ??
      (provider === "twilio" ? "AC00000000000000000000000000000001" : crypto.randomUUID()),
    parameters: options.parameters ?? {}
  })
  const rate = wire.sampleRate
  const frameSamples = wire.frameSamples
  const audibleRms = options.audibleRms ?? 300
  const burstGapMs = options.burstGapMs ?? 300
  const script = options.script

  // Rendering speech takes the event loop for a while: do it before the real-time clock starts.
  const speak = options.speak ?? espeak
  const lines = new Map<string, Int16Array>()
  for (const text of scriptLines(script)) if (!lines.has(text)) lines.set(text, await speak(text, rate))

  const headers: Record<string, string> = { ...options.headers }
  if (provider === "twilio" && options.twilioAuthToken !== undefined) {
    headers["X-Twilio-Signature"] = twilioStreamSignature(
      options.twilioAuthToken,
      streamRequestUrl(provider, options.signedUrl ?? options.url)
    )
  }
  const socket = new WebSocket(streamRequestUrl(provider, options.url), { headers, perMessageDeflate: false })
  await new Promise<void>((resolve, reject) => {
    socket.once("open", () => resolve())
    socket.once("unexpected-response", (request, response) => {
      let body = ""
      const refuse = () => {
        request.destroy()
        reject(new CalleeRefused(response.statusCode ?? 0, body))
      }
      response.setEncoding("utf8")
      response.on("data", (chunk: string) => (body += chunk))
      response.on("end", refuse)
      response.on("error", refuse)
    })
    socket.once("error", reject)
  })

  // --- recording state ---
  const calleeFrames: Array<Int16Array> = []
  const agentFrames: Array<Int16Array> = []
  const agentBursts: Array<{ startMs: number; endMs: number }> = []
  const agentMedia: Array<{ atMs: number; samples: number }> = []
  const utterances: Array<{ text: string; startMs: number; endMs: number | null }> = []
  const bargeIns: Array<{ text: string; speechStartMs: number; clearAtMs: number | null; burst: number | null }> = []
  const clears: Array<{ atMs: number; droppedMs: number; sinceBargeInMs: number | null }> = []
  const dtmf: Array<{ digit: string; atMs: number }> = []
  const progress: Array<{ atMs: number; event: Record<string, any> }> = []
  const timeouts: Array<{ step: number; atMs: number }> = []
  const protocolErrors: Array<{ atMs: number; reason: string }> = []
  let endedBy: CalleeReport["endedBy"] = null
  let closeCode: number | null = null
  let endedAtMs: number | null = null

  const t0 = performance.now()
  const clock = () => performance.now() - t0
  let frameIndex = 0
  let ended = false
  let timer: NodeJS.Timeout | undefined

  const send = (message: WireMessage) => {
    if (socket.readyState === WebSocket.OPEN) socket.send(message)
  }

  const playout = handsetPlayout({
    frameSamples,
    sampleRate: rate,
    marksOnClear: options.marksOnClear ?? "echo",
    answer: (name) => send(wire.markPlayed(name))
  })

  const currentBurst = (atMs: number) => {
    const last = agentBursts[agentBursts.length - 1]
    return last !== undefined && atMs - last.endMs <= burstGapMs ? last : undefined
  }

  const onAgent = (message: AgentMessage) => {
    const atMs = clock()
    switch (message.kind) {
      case "audio":
        if (message.problem !== undefined) protocolErrors.push({ atMs, reason: message.problem })
        agentMedia.push({ atMs, samples: message.pcm.length })
        playout.audio(message.pcm, atMs)
        return
      case "mark":
        playout.mark(message.name, atMs)
        return
      case "clear": {
        const droppedMs = playout.clear(atMs)
        const bargeIn = bargeIns[bargeIns.length - 1]
        if (bargeIn !== undefined && bargeIn.clearAtMs === null) bargeIn.clearAtMs = atMs
        clears.push({ atMs, droppedMs, sinceBargeInMs: bargeIn === undefined ? null : atMs - bargeIn.speechStartMs })
        wire.cleared().forEach(send)
        return
      }
      case "progress":
        progress.push({ atMs, event: message.event })
        return
      case "invalid":
        protocolErrors.push({ atMs, reason: message.reason })
    }
  }

  // --- the script, advanced once per frame before the frame is sent ---
  let stepIndex = 0
  let stepStartedMs = 0
  let stepBegun = false
  /** When the callee last started speaking or pressed a key: what the agent says after it answers that. */
  let lastSpeechStartMs = 0
  let speech: { pcm: Int16Array; offset: number; utterance: number } | null = null
  let held: WireMessage | null = null

  const startSpeech = (text: string, atMs: number, pcm = lines.get(text)!) => {
    lastSpeechStartMs = atMs
    utterances.push({ text, startMs: atMs, endMs: null })
    speech = { pcm, offset: 0, utterance: utterances.length - 1 }
  }

  const nextStep = (atMs: number) => {
    stepIndex++
    stepStartedMs = atMs
    stepBegun = false
  }

  /** Whether the step is finished at `atMs` (starting it if it has not begun). */
  const stepDone = (step: CalleeStep, atMs: number): boolean => {
    const begin = !stepBegun
    stepBegun = true
    if ("say" in step) {
      if (begin) startSpeech(step.say, atMs)
      return speech === null
    }
    if ("tone" in step) {
      const { hz, ms } = step.tone
      const pcm = Int16Array.from(
        { length: Math.round((rate * ms) / 1000) },
        (_, i) => Math.round(8000 * Math.sin((2 * Math.PI * hz * i) / rate))
      )
      if (begin) startSpeech(`(tone ${hz} Hz)`, atMs, pcm)
      return speech === null
    }
    if ("silence" in step) return atMs - stepStartedMs >= step.silence
    if ("dtmf" in step) {
      dtmf.push({ digit: step.dtmf, atMs })
      lastSpeechStartMs = atMs
      send(wire.dtmf(step.dtmf))
      return true
    }
    if ("hangUp" in step) {
      hangUp("callee")
      return true
    }
    if ("waitForAgent" in step) {
      const last = agentBursts[agentBursts.length - 1]
      if (last !== undefined && last.endMs > lastSpeechStartMs && atMs - last.endMs >= step.waitForAgent.quietMs) {
        return true
      }
      return timedOut(step.waitForAgent.timeoutMs, atMs)
    }
    const { afterAgentMs, say, timeoutMs } = step.bargeIn
    if (speech !== null) return false
    if (bargeIns.length > 0 && bargeIns[bargeIns.length - 1]!.speechStartMs >= stepStartedMs) return true
    const burst = currentBurst(atMs)
    if (burst !== undefined && burst.endMs >= atMs && atMs - burst.startMs >= afterAgentMs) {
      startSpeech(say, atMs)
      bargeIns.push({ text: say, speechStartMs: atMs, clearAtMs: null, burst: agentBursts.indexOf(burst) })
      return false
    }
    return timedOut(timeoutMs, atMs)
  }

  const timedOut = (timeoutMs: number | undefined, atMs: number) => {
    if (atMs - stepStartedMs < (timeoutMs ?? 20_000)) return false
    timeouts.push({ step: stepIndex, atMs })
    return true
  }

  /** What the callee heard, frame by frame, for the echo (the newest last). */
  const heardFrames: Array<Int16Array> = []
  const echoDelayFrames = Math.max(1, Math.round((options.echo?.delayMs ?? 0) / FRAME_MS))
  const withEcho = (frame: Int16Array) => {
    const echo = options.echo
    const heard = echo === undefined ? undefined : heardFrames[heardFrames.length - echoDelayFrames]
    if (echo === undefined || heard === undefined) return frame
    for (let i = 0; i < frame.length; i++) {
      frame[i] = Math.max(-32768, Math.min(32767, Math.round(frame[i]! + echo.gain * (heard[i] ?? 0))))
    }
    return frame
  }

  const calleeFrame = (atMs: number): Int16Array => withEcho(spokenFrame(atMs))

  const spokenFrame = (atMs: number): Int16Array => {
    const frame = new Int16Array(frameSamples)
    if (speech === null) return frame
    frame.set(speech.pcm.subarray(speech.offset, speech.offset + frameSamples))
    speech.offset += frameSamples
    if (speech.offset >= speech.pcm.length) {
      utterances[speech.utterance]!.endMs = atMs + (((speech.pcm.length % frameSamples) || frameSamples) / rate) * 1000
      speech = null
    }
    return frame
  }

  const tickFrame = (index: number) => {
    const atMs = index * FRAME_MS
    for (let step = script[stepIndex]; step !== undefined && !ended && stepDone(step, atMs); step = script[stepIndex]) {
      nextStep(atMs)
    }
    if (ended) return
    if (atMs >= (options.maxDurationMs ?? 120_000)) return hangUp("callee")
    const said = calleeFrame(atMs)
    calleeFrames.push(said)
    const media = wire.media(said, index)
    const reorder = options.reorderEvery
    if (held !== null) {
      send(media)
      send(held)
      held = null
    } else if (reorder !== undefined && index % reorder === reorder - 1) {
      held = media
    } else {
      send(media)
    }
    const heard = playout.play(atMs, clock())
    agentFrames.push(heard)
    if (options.echo !== undefined) {
      heardFrames.push(heard)
      if (heardFrames.length > echoDelayFrames) heardFrames.shift()
    }
    if (rms(heard) >= audibleRms) {
      const burst = currentBurst(atMs)
      if (burst === undefined) agentBursts.push({ startMs: atMs, endMs: atMs + FRAME_MS })
      else burst.endMs = atMs + FRAME_MS
    }
  }

  const tick = () => {
    const now = performance.now()
    while (!ended && t0 + frameIndex * FRAME_MS <= now) tickFrame(frameIndex++)
    if (!ended) timer = setTimeout(tick, Math.max(0, t0 + frameIndex * FRAME_MS - performance.now()))
  }

  let resolveDone!: (report: CalleeReport) => void
  const done = new Promise<CalleeReport>((resolve) => (resolveDone = resolve))

  const finish = () => {
    ended = true
    clearTimeout(timer)
    endedAtMs ??= clock()
  }

  function hangUp(by: "callee" | "carrier" = "callee") {
    if (ended) return
    endedBy = by
    finish()
    if (held !== null) send(held)
    wire.stop().forEach(send)
    socket.close(1000)
  }

  const report = (): CalleeReport => ({
    provider,
    sampleRate: rate,
    callee: concat(calleeFrames),
    agent: concat(agentFrames),
    agentBursts: agentBursts.map((burst) => ({ ...burst })),
    agentMedia: [...agentMedia],
    utterances: utterances.map((utterance) => ({ ...utterance })),
    bargeIns: bargeIns.map(({ burst, ...bargeIn }) => {
      const spokenOver = burst === null ? undefined : agentBursts[burst]
      const over = spokenOver !== undefined && (ended || clock() - spokenOver.endMs > burstGapMs)
      return { ...bargeIn, agentStoppedAtMs: over ? spokenOver.endMs : null }
    }),
    clears: [...clears],
    marks: playout.marks(),
    dtmf: [...dtmf],
    progress: [...progress],
    timeouts: [...timeouts],
    protocolErrors: [...protocolErrors],
    endedBy,
    serverClosed: endedBy === "server",
    closeCode,
    durationMs: endedAtMs ?? clock()
  })

  socket.on("message", (data, isBinary) => {
    if (!ended) onAgent(wire.parse(bytesOf(data), isBinary))
  })
  socket.on("error", (error) => protocolErrors.push({ atMs: clock(), reason: `socket error: ${error.message}` }))
  socket.on("close", (code) => {
    closeCode = code
    if (!ended) endedBy = "server"
    finish()
    resolveDone(report())
  })

  wire.opening().forEach(send)
  tick()
  return { done, report, hangUp }
}
