import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Duration, Effect, Layer, Stream } from "effect"
import type { SpeechConnection } from "../../../services/ModelSettings.ts"
import { OutboundHttp, type OutboundHttpShape } from "../../../services/OutboundHttp.ts"
import { SpeechFailed } from "../../../services/SpeechToText.ts"
import { TextToSpeech } from "../../../services/TextToSpeech.ts"
import type { VoiceSampleRate } from "../../../services/VoiceActivity.ts"
import { TEXT_TO_SPEECH_PROVIDERS } from "../../../src/voice/speechProviders.ts"
import { boundedReplyStream, REPLY_LIMITS, ReplyTooLarge } from "../../outbound/replyBody.ts"
import { ESPEAK_SAMPLE_RATE, espeakSamples, EspeakUnavailable } from "./espeakVoice.ts"
import { floatChunks, pcmChunker } from "./pcmChunks.ts"
import { failureForStatus, timedOut, tooLarge, unreachable, unusableConnection } from "./speechFailures.ts"
import {
  cartesiaRequest,
  deepgramSpeakRequest,
  elevenLabsRequest,
  openAiSpeechRequest,
  type TtsRequest
} from "./ttsRequests.ts"

export { TEXT_TO_SPEECH_PROVIDERS }

/** Until the provider answers with headers. */
const FIRST_BYTE_TIMEOUT_SECONDS = 15
/** Between two pieces of a stream already started. */
const STALL_TIMEOUT_SECONDS = 15

/**
 * Streams the provider's answer, read within REPLY_LIMITS.speechAudio. The request belongs to the
 * stream's scope: when the consumer stops early (barge-in interrupts the reply), the scope closes
 * and the request is aborted, so the provider stops generating and billing.
 */
const httpSpeech = (outbound: OutboundHttpShape, provider: string, request: TtsRequest, rate: VoiceSampleRate) =>
  Stream.unwrapScoped(
    Effect.gen(function*() {
      const response = yield* outbound.client("model").pipe(HttpClient.withScope).execute(
        HttpClientRequest.post(request.url).pipe(
          HttpClientRequest.setHeaders(request.headers),
          HttpClientRequest.bodyText(request.body, request.headers["Content-Type"] ?? "application/json")
        )
      ).pipe(
        Effect.mapError((error) => unreachable(provider, error)),
        Effect.timeoutFail({
          duration: Duration.seconds(FIRST_BYTE_TIMEOUT_SECONDS),
          onTimeout: () => timedOut(provider, "no answer", FIRST_BYTE_TIMEOUT_SECONDS)
        })
      )
      if (response.status < 200 || response.status > 299) return yield* failureForStatus(provider, response.status)
      const chunker = pcmChunker(request.sampleRate, rate)
      return boundedReplyStream(response, REPLY_LIMITS.speechAudio).pipe(
        Stream.mapError((error) =>
          error instanceof ReplyTooLarge ? tooLarge(provider, error.limit) : unreachable(provider, error)
        ),
        Stream.mapConcat((piece) => chunker.push(piece)),
        Stream.concat(Stream.suspend(() => Stream.fromIterable(chunker.end()))),
        Stream.timeoutFail(
          () => timedOut(provider, "the audio stream stalled", STALL_TIMEOUT_SECONDS),
          Duration.seconds(STALL_TIMEOUT_SECONDS)
        )
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

const withKey = (
  connection: SpeechConnection,
  make: (apiKey: string | null) => Stream.Stream<Int16Array, SpeechFailed>
) => {
  const unusable = unusableConnection(connection)
  return unusable === null ? make(connection.apiKey) : Stream.fail(unusable)
}

const synthesize = (
  outbound: OutboundHttpShape,
  connection: SpeechConnection,
  text: string,
  rate: VoiceSampleRate
): Stream.Stream<Int16Array, SpeechFailed> => {
  if (text.trim() === "") return Stream.empty
  const provider = connection.provider
  switch (provider) {
    case "elevenlabs":
      return withKey(
        connection,
        (key) => httpSpeech(outbound, provider, elevenLabsRequest(connection, key, text, rate), rate)
      )
    case "cartesia":
      return withKey(
        connection,
        (key) => httpSpeech(outbound, provider, cartesiaRequest(connection, key, text, rate), rate)
      )
    case "deepgram":
      return withKey(
        connection,
        (key) => httpSpeech(outbound, provider, deepgramSpeakRequest(connection, key, text, rate), rate)
      )
    case "openai":
      return withKey(
        connection,
        (key) => httpSpeech(outbound, provider, openAiSpeechRequest(connection, key, text), rate)
      )
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

export const TextToSpeechLive = Layer.effect(
  TextToSpeech,
  Effect.map(OutboundHttp, (outbound) =>
    TextToSpeech.of({
      synthesize: (connection, text, sampleRate) =>
        synthesize(outbound, connection, text, sampleRate).pipe(
          Stream.withSpan("TextToSpeech.synthesize", {
            attributes: {
              provider: connection.provider,
              model: connection.model ?? "",
              sampleRate,
              characters: text.length
            }
          })
        )
    }))
)
