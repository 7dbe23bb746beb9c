import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, identity, Queue, Schema } from "effect"
import type { SpeechConnection } from "../../../services/ModelSettings.ts"
import type { OutboundHttpShape } from "../../../services/OutboundHttp.ts"
import { SpeechFailed, type TranscriptionOptions, type TranscriptionSession } from "../../../services/SpeechToText.ts"
import { monoPcm16Wav } from "../../../src/audio/pcmWav.ts"
import { readBoundedReply, REPLY_LIMITS, ReplyTooLarge } from "../../outbound/replyBody.ts"
import { failureForStatus, timedOut, tooLarge, unreachable, unusableConnection } from "./speechFailures.ts"
import { endpointUrl } from "./speechUrls.ts"
import { transcriptChannel } from "./transcriptChannel.ts"

/**
 * OpenAI transcription (https://platform.openai.com/docs/api-reference/audio/createTranscription)
 * has no live stream: each utterance is buffered and posted as a WAV when the caller finalizes it
 * (the pipeline's end-of-turn decision), and answered with one speech-final Final. No interims.
 */
const PROVIDER = "openai"
const OPENAI_API = "https://api.openai.com/v1"
const DEFAULT_MODEL = "gpt-4o-mini-transcribe"
const REQUEST_TIMEOUT_SECONDS = 30
/** OpenAI rejects clips shorter than 0.1 s. */
const MIN_AUDIO_SECONDS = 0.1
/**
 * A turn this long is transcribed in pieces so no request (or buffer) grows without bound; such a
 * piece is Final but not speech-final, since the caller is still talking.
 */
const MAX_UTTERANCE_SECONDS = 60
/** Utterances waiting for a transcription request while one is in flight. */
const MAX_WAITING_UTTERANCES = 8

interface Utterance {
  readonly chunks: ReadonlyArray<Int16Array>
  readonly samples: number
  readonly startMs: number
  readonly speechFinal: boolean
}

/** OpenAI's answer with `response_format: "json"`; nothing else of it is read. */
const TranscriptionReply = Schema.parseJson(Schema.Struct({ text: Schema.String }))

const transcribe = (
  outbound: OutboundHttpShape,
  connection: SpeechConnection,
  options: TranscriptionOptions,
  utterance: Utterance
) =>
  Effect.gen(function*() {
    const form = new FormData()
    const wav = monoPcm16Wav(utterance.chunks, options.sampleRate)
    form.append("file", new Blob([wav], { type: "audio/wav" }), "utterance.wav")
    form.append("model", connection.model ?? DEFAULT_MODEL)
    form.append("response_format", "json")
    if (connection.language !== null) form.append("language", connection.language)
    // The multipart body encoded whole (boundary and all), so it goes with its length rather than chunked.
    const encoded = new Response(form)
    const body = new Uint8Array(yield* Effect.promise(() => encoded.arrayBuffer()))
    const response = yield* outbound.client("model").pipe(HttpClient.withScope).execute(
      HttpClientRequest.post(endpointUrl(connection.baseUrl, OPENAI_API, "/v1/audio/transcriptions")).pipe(
        HttpClientRequest.bodyUint8Array(body, encoded.headers.get("content-type") ?? "multipart/form-data"),
        connection.apiKey === null ? identity : HttpClientRequest.bearerToken(connection.apiKey)
      )
    ).pipe(Effect.mapError((error) => unreachable(PROVIDER, error)))
    // A refusal's body is never read: the scope's end aborts the request.
    if (response.status < 200 || response.status > 299) return yield* failureForStatus(PROVIDER, response.status)
    const reply = yield* readBoundedReply(response, REPLY_LIMITS.transcriptionJson).pipe(
      Effect.mapError((error) =>
        error instanceof ReplyTooLarge ? tooLarge(PROVIDER, error.limit) : unreachable(PROVIDER, error)
      )
    )
    const answer = yield* Schema.decodeUnknown(TranscriptionReply)(reply.toString("utf8")).pipe(
      Effect.mapError(() =>
        new SpeechFailed({ provider: PROVIDER, reason: "protocol", message: "OpenAI answered without text" })
      )
    )
    return answer.text.trim()
  }).pipe(
    Effect.scoped,
    Effect.timeoutFail({
      duration: Duration.seconds(REQUEST_TIMEOUT_SECONDS),
      onTimeout: () => timedOut(PROVIDER, "no transcription", REQUEST_TIMEOUT_SECONDS)
    })
  )

export const openOpenAiTranscriptionSession = (
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
    yield* Effect.addFinalizer(() => Effect.sync(channel.end))
    const waiting = yield* Effect.acquireRelease(Queue.bounded<Utterance>(MAX_WAITING_UTTERANCES), Queue.shutdown)
    const rate = options.sampleRate
    let chunks: Array<Int16Array> = []
    let buffered = 0
    let samplesReceived = 0
    let samplesPosted = 0

    // One request at a time, in order, so Finals arrive in the order the caller spoke.
    yield* Queue.take(waiting).pipe(
      Effect.flatMap((utterance) => {
        const endMs = Math.round(utterance.startMs + (utterance.samples * 1000) / rate)
        if (utterance.samples < MIN_AUDIO_SECONDS * rate) {
          channel.emit({
            _tag: "Final",
            text: "",
            speechFinal: utterance.speechFinal,
            startMs: utterance.startMs,
            endMs
          })
          return Effect.void
        }
        samplesPosted += utterance.samples
        return transcribe(outbound, connection, options, utterance).pipe(
          Effect.map((text) => {
            channel.emit({ _tag: "Final", text, speechFinal: utterance.speechFinal, startMs: utterance.startMs, endMs })
          })
        )
      }),
      Effect.forever,
      Effect.catchAll((failure) => Effect.sync(() => channel.fail(failure))),
      Effect.forkScoped
    )

    const flush = (speechFinal: boolean) =>
      Effect.suspend(() => {
        const failure = channel.failure()
        if (failure !== undefined) return Effect.fail(failure)
        if (buffered === 0 && !speechFinal) return Effect.void
        const utterance: Utterance = {
          chunks,
          samples: buffered,
          startMs: Math.round(((samplesReceived - buffered) * 1000) / rate),
          speechFinal
        }
        chunks = []
        buffered = 0
        if (waiting.unsafeOffer(utterance)) return Effect.void
        const overflow = timedOut(PROVIDER, "transcriptions are not keeping up", REQUEST_TIMEOUT_SECONDS)
        channel.fail(overflow)
        return Effect.fail(overflow)
      })

    return {
      send: (pcm) =>
        Effect.suspend(() => {
          const failure = channel.failure()
          if (failure !== undefined) return Effect.fail(failure)
          chunks.push(pcm.slice())
          buffered += pcm.length
          samplesReceived += pcm.length
          return buffered >= MAX_UTTERANCE_SECONDS * rate ? flush(false) : Effect.void
        }),
      finalize: flush(true),
      events: channel.events,
      audioSeconds: Effect.sync(() => samplesPosted / rate)
    } satisfies TranscriptionSession
  })
