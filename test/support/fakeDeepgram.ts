import { createServer, type IncomingMessage } from "node:http"
import type { AddressInfo } from "node:net"
import type { Duplex } from "node:stream"
import { type WebSocket, WebSocketServer } from "ws"
import { MU_LAW_DECODE } from "../../src/audio/g711.ts"

/**
 * A loopback Deepgram live-transcription server (`/v1/listen`), speaking the real protocol to a
 * real client. It cannot recognise speech, so it is an oracle: a test registers, per Deepgram
 * `tag` (the run's reference), the lines the callee will say, and the fake times its answers from
 * the energy of the audio it actually receives:
 *
 * - speech starts when a 10 ms frame is louder than `speechDbfs` → `SpeechStarted` (vad_events);
 * - while it lasts, interim `Results` every `interimEveryMs` of audio reveal the line word by word;
 * - after `endpointing` ms of quiet → final `Results` with the whole line, `speech_final: true`;
 * - after `utterance_end_ms` of quiet → `UtteranceEnd`;
 * - `Finalize` flushes a pending utterance (`from_finalize: true`): its line, or of a line given in
 *   parts its next part; the next speech is the rest of that utterance (a caller pausing
 *   mid-sentence) while parts are left, and speech coming back within `endpointing` ms after the
 *   line is all told (on the audio clock and the wall clock) is transcribed as "";
 *   `KeepAlive` is counted,
 *   `CloseStream` flushes, sends `Metadata` and closes; 10 s with neither audio nor KeepAlive
 *   closes the stream with 1011, as Deepgram does.
 *
 * Each utterance consumes the tag's next line (an unscripted one is transcribed as ""). All times
 * are on the stream's audio clock, in seconds, like Deepgram's.
 */
/** What the callee says in one utterance; in parts when they pause (briefly) between them. */
/** How often, in ms of speech, interim results reveal the line unless a test says otherwise. */
export const DEFAULT_INTERIM_EVERY_MS = 250

export type ScriptLine = string | ReadonlyArray<string>

interface FakeDeepgramConnection {
  readonly tag: string | null
  readonly query: URLSearchParams
  readonly sampleRate: number
  /** Seconds of audio received. */
  audioSeconds: number
  keepAlives: number
  finalizes: number
  closeStreamReceived: boolean
  closed: boolean
  /** Transcripts sent as final results, in order. */
  readonly finals: Array<string>
  /** Every JSON message sent to the client. */
  readonly sent: Array<Record<string, unknown>>
}

export interface FakeDeepgram {
  /** The `base_url` to configure (http://127.0.0.1:port). */
  readonly url: string
  readonly apiKey: string
  readonly connections: ReadonlyArray<FakeDeepgramConnection>
  /** The lines the callee of `tag` will say, one per utterance, in order (appended to any already registered). */
  readonly script: (tag: string, lines: ReadonlyArray<ScriptLine>) => void
  /**
   * Scripts for streams whose tag is not known in advance (runs the server creates itself): the
   * first utterance of a tag with no script of its own takes the next of these, in order.
   */
  readonly scriptNewStreams: (scripts: ReadonlyArray<ReadonlyArray<ScriptLine>>) => void
  /** Closes every open stream as a provider failure would (default 1011). */
  readonly dropConnections: (code?: number) => void
  readonly close: () => Promise<void>
}

interface FakeDeepgramOptions {
  readonly apiKey?: string
  /** A 10 ms frame louder than this is speech (default -40 dBFS; eSpeak speech is around -20). */
  readonly speechDbfs?: number
  readonly interimEveryMs?: number
  /** How long without audio or KeepAlive before the stream is closed (default 10 s, Deepgram's). */
  readonly idleTimeoutMs?: number
}

const FRAME_MS = 10

const frameDbfs = (samples: Int16Array) => {
  let sum = 0
  for (const sample of samples) sum += sample * sample
  const rms = Math.sqrt(sum / Math.max(1, samples.length))
  return rms === 0 ? -Infinity : 20 * Math.log10(rms / 32768)
}

const seconds = (ms: number) => Math.round(ms) / 1000

export const startFakeDeepgram = async (options: FakeDeepgramOptions = {}): Promise<FakeDeepgram> => {
  const apiKey = options.apiKey ?? "test-deepgram-key"
  const speechDbfs = options.speechDbfs ?? -40
  const interimEveryMs = options.interimEveryMs ?? DEFAULT_INTERIM_EVERY_MS
  const idleTimeoutMs = options.idleTimeoutMs ?? 10_000
  const scripts = new Map<string, Array<ScriptLine>>()
  const newStreamScripts: Array<ReadonlyArray<ScriptLine>> = []
  const connections: Array<FakeDeepgramConnection> = []
  const sockets = new Set<WebSocket>()

  const http = createServer((_request, response) => response.writeHead(404).end())
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false })

  http.on("upgrade", (request: IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(request.url ?? "/", "http://fake")
    const refuse = (status: number, text: string) => {
      socket.end(
        `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nConnection: close\r\n\r\n{"err_code":"${text}"}`
      )
    }
    if (url.pathname !== "/v1/listen") return refuse(404, "Not Found")
    if (request.headers.authorization !== `Token ${apiKey}`) return refuse(401, "INVALID_AUTH")
    const sampleRate = Number(url.searchParams.get("sample_rate"))
    const encoding = url.searchParams.get("encoding")
    if (!(sampleRate > 0) || (encoding !== "linear16" && encoding !== "mulaw")) return refuse(400, "Bad Request")
    wss.handleUpgrade(request, socket, head, (ws) => serve(ws, url.searchParams, sampleRate, encoding))
  })

  const serve = (ws: WebSocket, query: URLSearchParams, sampleRate: number, encoding: "linear16" | "mulaw") => {
    sockets.add(ws)
    const tag = query.get("tag")
    const interim = query.get("interim_results") === "true"
    const vadEvents = query.get("vad_events") === "true"
    const endpointingMs = query.get("endpointing") === "false" ? Infinity : Number(query.get("endpointing") ?? 10)
    const utteranceEndMs = query.has("utterance_end_ms") ? Number(query.get("utterance_end_ms")) : Infinity
    const connection: FakeDeepgramConnection = {
      tag,
      query,
      sampleRate,
      audioSeconds: 0,
      keepAlives: 0,
      finalizes: 0,
      closeStreamReceived: false,
      closed: false,
      finals: [],
      sent: []
    }
    connections.push(connection)
    const frameSamples = (sampleRate * FRAME_MS) / 1000
    const frame = new Int16Array(frameSamples)
    let filled = 0
    let leftover: number | undefined
    let clockMs = 0

    /** The utterance being heard: its line, where it started, and the end of its last loud frame. */
    let utterance: { line: string; startMs: number; lastVoiceMs: number; nextInterimMs: number } | undefined
    /**
     * After a Finalize flushed an utterance, until `endpointing` ms of quiet: its last voice, on the
     * audio clock and when the flush came (wall clock).
     */
    let flushedAt: number | undefined
    let flushedWallAt = 0
    /** After a final, until UtteranceEnd: where the last word ended. */
    let awaitingUtteranceEnd: number | undefined

    const send = (message: Record<string, unknown>) => {
      connection.sent.push(message)
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(message))
    }
    const results = (
      transcript: string,
      startMs: number,
      endMs: number,
      flags: { is_final: boolean; speech_final: boolean; from_finalize?: boolean }
    ) =>
      send({
        type: "Results",
        channel_index: [0, 1],
        duration: seconds(endMs - startMs),
        start: seconds(startMs),
        is_final: flags.is_final,
        speech_final: flags.speech_final,
        ...(flags.from_finalize ? { from_finalize: true } : {}),
        channel: { alternatives: [{ transcript, confidence: transcript === "" ? 0 : 0.99, words: [] }] },
        metadata: { request_id: "fake", model_info: { name: query.get("model") ?? "nova-3" } }
      })
    /** The parts of the utterance's line not transcribed yet, for after a flush. */
    let untold: Array<string> = []
    const nextLine = () => {
      if (tag !== null && !scripts.has(tag) && newStreamScripts.length > 0) {
        scripts.set(tag, [...newStreamScripts.shift()!])
      }
      const line = (tag === null ? undefined : scripts.get(tag)?.shift()) ?? ""
      const [first = "", ...rest] = typeof line === "string" ? [line] : line
      untold = rest
      return first
    }

    const finish = (flags: { speech_final: boolean; from_finalize?: boolean }) => {
      if (utterance === undefined) return
      // Without a flush in between, the end of speech tells the whole line.
      const line = flags.from_finalize ? utterance.line : [utterance.line, ...untold].filter(Boolean).join(" ")
      if (!flags.from_finalize) untold = []
      connection.finals.push(line)
      results(line, utterance.startMs, utterance.lastVoiceMs, { is_final: true, ...flags })
      flushedAt = flags.from_finalize ? utterance.lastVoiceMs : undefined
      flushedWallAt = Date.now()
      awaitingUtteranceEnd = utterance.lastVoiceMs
      utterance = undefined
    }

    const hear = (samples: Int16Array) => {
      const startMs = clockMs
      clockMs += FRAME_MS
      const loud = frameDbfs(samples) > speechDbfs
      if (loud) {
        if (utterance === undefined) {
          // After a flush, speech that comes back is the rest of the utterance when the caller
          // registered it in parts and parts are left, however long they paused (the stand-in
          // only hears the audio the product chose to send, so its clock is not the caller's);
          // otherwise when it comes back within `endpointing` ms, by the audio and by the wall
          // clock: the voice trailing after the flush, not a new utterance sent seconds later
          // with only a short pre-roll of quiet before it.
          const continues = flushedAt !== undefined &&
            (untold.length > 0 ||
              (startMs - flushedAt < endpointingMs && Date.now() - flushedWallAt < endpointingMs))
          flushedAt = undefined
          utterance = {
            line: continues ? untold.shift() ?? "" : nextLine(),
            startMs,
            lastVoiceMs: clockMs,
            nextInterimMs: startMs + interimEveryMs
          }
          awaitingUtteranceEnd = undefined
          if (vadEvents) send({ type: "SpeechStarted", channel: [0], timestamp: seconds(startMs) })
        }
        utterance.lastVoiceMs = clockMs
      }
      if (utterance !== undefined) {
        if (interim && loud && clockMs >= utterance.nextInterimMs) {
          const words = utterance.line.split(/\s+/).filter((word) => word !== "")
          const shown = Math.max(1, Math.min(words.length - 1, Math.floor((clockMs - utterance.startMs) / 300)))
          if (words.length > 0) {
            results(words.slice(0, shown).join(" "), utterance.startMs, clockMs, {
              is_final: false,
              speech_final: false
            })
          }
          utterance.nextInterimMs = clockMs + interimEveryMs
        }
        if (clockMs - utterance.lastVoiceMs >= endpointingMs) finish({ speech_final: true })
      } else if (awaitingUtteranceEnd !== undefined && clockMs - awaitingUtteranceEnd >= utteranceEndMs) {
        send({ type: "UtteranceEnd", channel: [0, 1], last_word_end: seconds(awaitingUtteranceEnd) })
        awaitingUtteranceEnd = undefined
      }
    }

    const receiveSamples = (samples: ArrayLike<number>) => {
      for (let i = 0; i < samples.length; i++) {
        frame[filled++] = samples[i]!
        if (filled === frameSamples) {
          hear(frame)
          filled = 0
        }
      }
    }

    const receiveAudio = (bytes: Buffer) => {
      if (encoding === "mulaw") {
        connection.audioSeconds += bytes.length / sampleRate
        return receiveSamples(Array.from(bytes, (byte) => MU_LAW_DECODE[byte]!))
      }
      // linear16 frames may split a sample across messages.
      let data = bytes
      if (leftover !== undefined) {
        data = Buffer.concat([Buffer.from([leftover]), bytes])
        leftover = undefined
      }
      if (data.length % 2 === 1) {
        leftover = data[data.length - 1]
        data = data.subarray(0, data.length - 1)
      }
      const samples = new Int16Array(data.length / 2)
      for (let i = 0; i < samples.length; i++) samples[i] = data.readInt16LE(i * 2)
      connection.audioSeconds += samples.length / sampleRate
      receiveSamples(samples)
    }

    let idle = setTimeout(() => ws.close(1011, "NET-0001"), idleTimeoutMs)
    const active = () => {
      clearTimeout(idle)
      idle = setTimeout(() => ws.close(1011, "NET-0001"), idleTimeoutMs)
    }

    ws.on("message", (data: Buffer, isBinary) => {
      active()
      if (isBinary) return receiveAudio(data)
      let message: { type?: string }
      try {
        message = JSON.parse(data.toString())
      } catch {
        return ws.close(1008, "DATA-0000")
      }
      if (message.type === "KeepAlive") connection.keepAlives++
      else if (message.type === "Finalize") {
        connection.finalizes++
        if (utterance !== undefined) finish({ speech_final: false, from_finalize: true })
        else results("", clockMs, clockMs, { is_final: true, speech_final: false, from_finalize: true })
      } else if (message.type === "CloseStream") {
        connection.closeStreamReceived = true
        finish({ speech_final: true })
        send({
          type: "Metadata",
          transaction_key: "deprecated",
          request_id: "fake",
          sha256: "",
          created: new Date().toISOString(),
          duration: connection.audioSeconds,
          channels: 1
        })
        ws.close(1000)
      }
    })
    ws.on("close", () => {
      clearTimeout(idle)
      connection.closed = true
      sockets.delete(ws)
    })
  }

  await new Promise<void>((resolve) => http.listen(0, "127.0.0.1", resolve))
  const { port } = http.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    apiKey,
    connections,
    script: (tag, lines) => scripts.set(tag, [...(scripts.get(tag) ?? []), ...lines]),
    scriptNewStreams: (scripts) => newStreamScripts.push(...scripts),
    dropConnections: (code = 1011) => {
      for (const ws of sockets) ws.close(code, "NET-0000")
    },
    close: async () => {
      for (const ws of sockets) ws.terminate()
      await new Promise<void>((resolve) => wss.close(() => resolve()))
      await new Promise<void>((resolve) => http.close(() => resolve()))
    }
  }
}
