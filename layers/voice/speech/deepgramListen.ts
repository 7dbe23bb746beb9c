import { Clock, Duration, Effect, Schedule } from "effect"
import WebSocket from "ws"
import type { SpeechConnection } from "../../../services/ModelSettings.ts"
import type { OutboundHttpShape } from "../../../services/OutboundHttp.ts"
import {
  SpeechFailed,
  type TranscriptEvent,
  type TranscriptionOptions,
  type TranscriptionSession
} from "../../../services/SpeechToText.ts"
import { REPLY_LIMITS } from "../../outbound/replyBody.ts"
import { failureForStatus, timedOut, unreachable, unusableConnection } from "./speechFailures.ts"
import { asWebSocketUrl, endpointUrl } from "./speechUrls.ts"
import { transcriptChannel } from "./transcriptChannel.ts"

/**
 * Deepgram live transcription over its WebSocket API
 * (https://developers.deepgram.com/reference/speech-to-text/listen-streaming): raw linear16 audio
 * as binary frames; JSON control messages `KeepAlive`, `Finalize`, `CloseStream`; answers
 * `Results`, `UtteranceEnd`, `SpeechStarted`, `Metadata`.
 */
const PROVIDER = "deepgram"
const DEEPGRAM_API = "https://api.deepgram.com"
const DEFAULT_MODEL = "nova-3"
/** Pause that makes Deepgram mark a result `speech_final`; 300–500 ms suits conversation. */
const DEFAULT_ENDPOINTING_MS = 300
/** Deepgram's minimum for UtteranceEnd, sent after this long without a word. */
const DEFAULT_UTTERANCE_END_MS = 1000
const CONNECT_TIMEOUT_SECONDS = 10
/** Deepgram closes a stream that gets neither audio nor KeepAlive for 10 s. */
const KEEPALIVE_AFTER_MS = 5000
/** How long CloseStream may take to flush the last results before the socket is cut. */
const CLOSE_GRACE_MS = 2000
/** Audio queued in the socket but not yet sent: 1 MB is ~30 s at 16 kHz, so the link has stalled. */
const MAX_UNSENT_BYTES = 1 << 20

interface DeepgramResults {
  readonly type: "Results"
  readonly is_final?: boolean
  readonly speech_final?: boolean
  readonly from_finalize?: boolean
  readonly start?: number
  readonly duration?: number
  readonly channel?: { readonly alternatives?: ReadonlyArray<{ readonly transcript?: string }> }
}

export const deepgramListenUrl = (connection: SpeechConnection, options: TranscriptionOptions): URL => {
  const url = asWebSocketUrl(endpointUrl(connection.baseUrl, DEEPGRAM_API, "/v1/listen"))
  const query = url.searchParams
  query.set("encoding", "linear16")
  query.set("sample_rate", `${options.sampleRate}`)
  query.set("channels", "1")
  query.set("interim_results", "true")
  query.set("punctuate", "true")
  query.set("endpointing", `${options.endpointingMs ?? DEFAULT_ENDPOINTING_MS}`)
  query.set("utterance_end_ms", `${Math.max(1000, options.utteranceEndMs ?? DEFAULT_UTTERANCE_END_MS)}`)
  query.set("vad_events", "true")
  query.set("model", connection.model ?? DEFAULT_MODEL)
  if (connection.language !== null) query.set("language", connection.language)
  if (options.tag !== undefined) query.set("tag", options.tag)
  return url
}

/**
 * A Results message as our event. Finals arrive for each stable stretch of audio, most with
 * `speech_final` false while the caller keeps talking; empty ones (silence) are dropped unless they
 * close the utterance. An answer to Finalize (`from_finalize`) closes the utterance too: the
 * caller asked for it because the turn is over.
 */
export const transcriptEventOf = (results: DeepgramResults): TranscriptEvent | undefined => {
  const text = (results.channel?.alternatives?.[0]?.transcript ?? "").trim()
  if (results.is_final !== true) return text === "" ? undefined : { _tag: "Interim", text }
  const speechFinal = results.speech_final === true || results.from_finalize === true
  if (text === "" && !speechFinal) return undefined
  const startMs = Math.round((results.start ?? 0) * 1000)
  return { _tag: "Final", text, speechFinal, startMs, endMs: startMs + Math.round((results.duration ?? 0) * 1000) }
}

interface SocketHandlers {
  readonly message: (data: WebSocket.RawData, isBinary: boolean) => void
  readonly close: (code: number) => void
}

/**
 * Handlers are attached before the handshake, so nothing the server sends right after it is
 * missed. The connection goes through the outbound policy's agent (redirects are not followed),
 * and no message may exceed REPLY_LIMITS.transcriptionMessage.
 */
const connect = (outbound: OutboundHttpShape, url: URL, apiKey: string | null, handlers: SocketHandlers) =>
  Effect.async<WebSocket, SpeechFailed>((resume) => {
    const blocked = outbound.literalRefusal("model", url)
    if (blocked) return resume(Effect.fail(unreachable(PROVIDER, blocked)))
    const socket = new WebSocket(url, {
      headers: apiKey === null ? {} : { Authorization: `Token ${apiKey}` },
      agent: outbound.agent("model", url.protocol === "wss:"),
      maxPayload: REPLY_LIMITS.transcriptionMessage,
      perMessageDeflate: false,
      handshakeTimeout: CONNECT_TIMEOUT_SECONDS * 1000
    })
    socket.on("message", handlers.message)
    // A socket error is always followed by "close"; before the handshake it also settles below.
    socket.on("error", () => {})
    let settled = false
    const settle = (outcome: Effect.Effect<WebSocket, SpeechFailed>) => {
      if (settled) return
      settled = true
      resume(outcome)
    }
    socket.once("open", () => {
      socket.once("close", handlers.close)
      settle(Effect.succeed(socket))
    })
    socket.once("unexpected-response", (request, response) => {
      response.resume()
      request.destroy()
      settle(Effect.fail(failureForStatus(PROVIDER, response.statusCode ?? 0)))
    })
    socket.once("error", (error) =>
      settle(
        Effect.fail(
          /timed out/i.test(error.message)
            ? timedOut(PROVIDER, "no WebSocket handshake", CONNECT_TIMEOUT_SECONDS)
            : unreachable(PROVIDER, error)
        )
      ))
    return Effect.sync(() => socket.terminate())
  })

const closeGracefully = (socket: WebSocket) =>
  Effect.async<void>((resume) => {
    if (socket.readyState === WebSocket.CLOSED) return resume(Effect.void)
    const timer = setTimeout(() => socket.terminate(), CLOSE_GRACE_MS)
    socket.once("close", () => {
      clearTimeout(timer)
      resume(Effect.void)
    })
    if (socket.readyState === WebSocket.OPEN) socket.send(JSON.stringify({ type: "CloseStream" }))
    else socket.terminate()
  })

export const openDeepgramSession = (
  outbound: OutboundHttpShape,
  connection: SpeechConnection,
  options: TranscriptionOptions
) =>
  Effect.gen(function*() {
    const unusable = unusableConnection(connection)
    if (unusable !== null) return yield* unusable
    const channel = yield* transcriptChannel(
      () =>
        new SpeechFailed({ provider: PROVIDER, reason: "protocol", message: "transcript events are not being read" })
    )
    const url = deepgramListenUrl(connection, options)
    let closing = false
    const handlers: SocketHandlers = {
      message: (data, isBinary) => {
        if (isBinary) return
        let message: { readonly type?: unknown }
        try {
          message = JSON.parse(data.toString())
        } catch {
          return channel.fail(
            new SpeechFailed({
              provider: PROVIDER,
              reason: "protocol",
              message: "Deepgram sent a message that is not JSON"
            })
          )
        }
        if (message.type === "Results") {
          const event = transcriptEventOf(message as DeepgramResults)
          if (event !== undefined) channel.emit(event)
        } else if (message.type === "UtteranceEnd") {
          channel.emit({ _tag: "UtteranceEnd" })
        }
      },
      close: (code) => {
        if (closing) channel.end()
        else {channel.fail(
            new SpeechFailed({
              provider: PROVIDER,
              reason: "protocol",
              message: `Deepgram closed the stream (code ${code})`
            })
          )}
      }
    }
    const socket = yield* Effect.acquireRelease(connect(outbound, url, connection.apiKey, handlers), (socket) =>
      Effect.suspend(() => {
        closing = true
        return closeGracefully(socket)
      }))
    let samplesSent = 0
    let lastSentAt = yield* Clock.currentTimeMillis

    const writable = Effect.suspend(() => {
      const failure = channel.failure()
      if (failure !== undefined) {
        return Effect.fail(failure)
      }
      if (socket.readyState !== WebSocket.OPEN) {
        return Effect.fail(
          new SpeechFailed({ provider: PROVIDER, reason: "protocol", message: "the Deepgram stream is closed" })
        )
      }
      if (socket.bufferedAmount > MAX_UNSENT_BYTES) {
        const failure = new SpeechFailed({
          provider: PROVIDER,
          reason: "timeout",
          message: "Deepgram is not accepting audio (1 MB unsent)"
        })
        channel.fail(failure)
        return Effect.fail(failure)
      }
      return Effect.void
    })

    const sendControl = (type: string) =>
      writable.pipe(
        Effect.zipRight(Clock.currentTimeMillis),
        Effect.map((now) => {
          lastSentAt = now
          socket.send(JSON.stringify({ type }))
        })
      )

    yield* Clock.currentTimeMillis.pipe(
      Effect.flatMap((now) =>
        now - lastSentAt >= KEEPALIVE_AFTER_MS && socket.readyState === WebSocket.OPEN
          ? sendControl("KeepAlive")
          : Effect.void
      ),
      Effect.ignore,
      Effect.repeat(Schedule.spaced(Duration.seconds(1))),
      Effect.forkScoped
    )

    return {
      send: (pcm) =>
        writable.pipe(
          Effect.zipRight(Clock.currentTimeMillis),
          Effect.map((now) => {
            lastSentAt = now
            samplesSent += pcm.length
            socket.send(Buffer.from(pcm.buffer, pcm.byteOffset, pcm.byteLength))
          })
        ),
      finalize: sendControl("Finalize"),
      events: channel.events,
      audioSeconds: Effect.sync(() =>
        samplesSent / options.sampleRate
      )
    } satisfies TranscriptionSession
  })
