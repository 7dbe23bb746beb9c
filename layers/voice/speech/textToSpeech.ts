import { Duration, Effect, Layer, Stream } from "effect"
import type { SpeechConnection } from "../../../services/ModelSettings.ts"
import { SpeechFailed } from "../../../services/SpeechToText.ts"
import { TextToSpeech } from "../../../services/TextToSpeech.ts"
import type { VoiceSampleRate } from "../../../services/VoiceActivity.ts"
import { ESPEAK_SAMPLE_RATE, EspeakUnavailable, espeakSamples } from "./espeakVoice.ts"
import { floatChunks, pcmChunker } from "./pcmChunks.ts"
import { failureForStatus, missingKey, timedOut, unreachable } from "./speechFailures.ts"
import { cartesiaRequest, deepgramSpeakRequest, elevenLabsRequest, openAiSpeechRequest, type TtsRequest } from "./ttsRequests.ts"

export const TEXT_TO_SPEECH_PROVIDERS = ["elevenlabs", "cartesia", "deepgram", "openai", "local"] as const

/** Until the provider answers with headers. */
const FIRST_BYTE_TIMEOUT_SECONDS = 15
/** Between two pieces of a stream already started. */
const STALL_TIMEOUT_SECONDS = 15

/**
 * Streams the provider's answer. The request belongs to the stream's scope: when the consumer
 * stops early (barge-in interrupts the reply), the scope closes and the fetch is aborted, so the
 * provider stops generating and billing.
 */
const httpSpeech = (provider: string, request: TtsRequest, rate: VoiceSampleRate) =>
  Stream.unwrapScoped(
    Effect.gen(function* () {
      const controller = yield* Effect.acquireRelease(
        Effect.sync(() => new AbortController()),
        (controller) => Effect.sync(() => controller.abort())
      )
      const response = yield* Effect.tryPromise({
        try: () => fetch(request.url, { method: "POST", headers: request.headers, body: request.body, signal: controller.signal }),
        catch: (error) => unreachable(provider, error)
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.seconds(FIRST_BYTE_TIMEOUT_SECONDS),
          onTimeout: () => timedOut(provider, "no answer", FIRST_BYTE_TIMEOUT_SECONDS)
        })
      )
      if (!response.ok || response.body === null) {
        yield* Effect.promise(() => response.body?.cancel() ?? Promise.resolve())
        return yield* response.ok
          ? new SpeechFailed({ provider, reason: "protocol", message: `${provider} answered without audio` })
          : failureForStatus(provider, response.status)
      }
      const chunker = pcmChunker(request.sampleRate, rate)
      return Stream.fromAsyncIterable(response.body, (error) => unreachable(provider, error)).pipe(
        Stream.timeoutFail(() => timedOut(provider, "the audio stream stalled", STALL_TIMEOUT_SECONDS), Duration.seconds(STALL_TIMEOUT_SECONDS)),
        Stream.mapConcat(chunker.push),
        Stream.concat(Stream.suspend(() => Stream.fromIterable(chunker.end())))
      )
    })
  )

const localSpeech = (connection: SpeechConnection, text: string, rate: VoiceSampleRate) =>
  Stream.unwrap(
    Effect.tryPromise({
      try: () => espeakSamples(text, connection.voice ?? undefined),
      catch: (error) =>
        error instanceof EspeakUnavailable
          ? new SpeechFailed({ provider: "local", reason: "unsupported", message: error.message })
          : new SpeechFailed({ provider: "local", reason: "protocol", message: "the local voice failed to render" })
    }).pipe(Effect.map((samples) => Stream.fromIterable(floatChunks(samples, ESPEAK_SAMPLE_RATE, rate))))
  )

const withKey = (connection: SpeechConnection, make: (apiKey: string) => Stream.Stream<Int16Array, SpeechFailed>) =>
  connection.apiKey === null ? Stream.fail(missingKey(connection.provider)) : make(connection.apiKey)

const synthesize = (connection: SpeechConnection, text: string, rate: VoiceSampleRate): Stream.Stream<Int16Array, SpeechFailed> => {
  if (text.trim() === "") return Stream.empty
  const provider = connection.provider
  switch (provider) {
    case "elevenlabs":
      return withKey(connection, (key) => httpSpeech(provider, elevenLabsRequest(connection, key, text, rate), rate))
    case "cartesia":
      return withKey(connection, (key) => httpSpeech(provider, cartesiaRequest(connection, key, text, rate), rate))
    case "deepgram":
      return withKey(connection, (key) => httpSpeech(provider, deepgramSpeakRequest(connection, key, text, rate), rate))
    case "openai":
      return withKey(connection, (key) => httpSpeech(provider, openAiSpeechRequest(connection, key, text), rate))
    case "local":
      return localSpeech(connection, text, rate)
    default:
      return Stream.fail(
        new SpeechFailed({
          provider,
          reason: "unsupported",
          message: `no text-to-speech provider "${provider}" (use ${TEXT_TO_SPEECH_PROVIDERS.join(", ")})`
        })
      )
  }
}

export const TextToSpeechLive = Layer.succeed(
  TextToSpeech,
  TextToSpeech.of({
    synthesize: (connection, text, sampleRate) =>
      synthesize(connection, text, sampleRate).pipe(
        Stream.withSpan("TextToSpeech.synthesize", {
          attributes: { provider: connection.provider, model: connection.model ?? "", sampleRate, characters: text.length }
        })
      )
  })
)
