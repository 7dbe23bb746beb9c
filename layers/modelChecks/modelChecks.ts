import { Chunk, Clock, Duration, Effect, Layer, Option, Stream } from "effect"
import { LlmChat } from "../../services/LlmChat.ts"
import { type ModelCheckResult, ModelChecks, type ModelKind } from "../../services/ModelChecks.ts"
import { ModelSettings, type SpeechConnection } from "../../services/ModelSettings.ts"
import { type SpeechFailed, SpeechToText } from "../../services/SpeechToText.ts"
import { TextToSpeech } from "../../services/TextToSpeech.ts"
import { monoPcm16Wav } from "../../src/audio/pcmWav.ts"
import { UpstreamFailed, ValidationFailed } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { LlmChatLive } from "../llm/openaiChat.ts"
import { SpeechToTextLive } from "../voice/speech/speechToText.ts"
import { TextToSpeechLive } from "../voice/speech/textToSpeech.ts"

const SAMPLE_RATE = 16000
const PROMPT = "Reply with one short sentence saying that you can be reached."
/** Short enough to cost next to nothing, long enough to be recognisable. */
const PHRASE = "Testing talkgraph, one two three."
/** Silence after the phrase, so a live transcriber sees the utterance end (Deepgram's endpointing). */
const TRAILING_SILENCE_MS = 800
/** The chunk size a call sends (20 ms), so a live provider sees the audio as it would in a call. */
const CHUNK_SAMPLES = SAMPLE_RATE / 50
const TRANSCRIPT_TIMEOUT_SECONDS = 20
const LLM_CHECK_TIMEOUT_SECONDS = 30
/** The offline voice speaks the STT test phrase when the organization has no TTS of its own. */
const LOCAL_VOICE: SpeechConnection = {
  provider: "local",
  model: null,
  apiKey: null,
  baseUrl: null,
  voice: null,
  language: null
}

const kindNames: Record<ModelKind, string> = { llm: "LLM", stt: "speech-to-text", tts: "text-to-speech" }

const notConfigured = (kind: ModelKind) =>
  ValidationFailed.single(
    ["body", "kind"],
    `No ${kindNames[kind]} is configured for your organization; save one first`
  )

/** Which provider failed, never how: the details go to the server log only (README "Outbound requests"). */
const providerFailed = (kind: ModelKind, provider: string) =>
  new UpstreamFailed({
    message: `The ${kindNames[kind]} provider (${provider}) could not be used; the server log has the details`
  })

const logSpeechFailure = (kind: ModelKind, failure: SpeechFailed) =>
  Effect.logWarning("A model configuration check failed").pipe(
    Effect.annotateLogs({ kind, provider: failure.provider, reason: failure.reason, error: failure.message })
  )

const samplesOf = (chunks: Chunk.Chunk<Int16Array>) => Chunk.reduce(chunks, 0, (sum, chunk) => sum + chunk.length)

const flatten = (chunks: Chunk.Chunk<Int16Array>, extraSamples = 0) => {
  const out = new Int16Array(samplesOf(chunks) + extraSamples)
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.length
  }
  return out
}

/**
 * The checks, with the same provider clients calls use (the LLM chat stream, streaming STT and
 * TTS, all through the outbound policy). Needs the model settings and the outbound client below.
 */
export const ModelChecksLive = Layer.effect(
  ModelChecks,
  Effect.gen(function*() {
    const settings = yield* ModelSettings
    const llm = yield* LlmChat
    const tts = yield* TextToSpeech
    const stt = yield* SpeechToText

    const elapsedSince = (start: number) => Effect.map(Clock.currentTimeMillis, (now) => Math.round(now - start))

    const speak = (connection: SpeechConnection, text: string) =>
      tts.synthesize(connection, text, SAMPLE_RATE).pipe(Stream.runCollect)

    const checkLlm = (organizationId: number) =>
      Effect.gen(function*() {
        const connection = yield* settings.llmFor(organizationId)
        if (Option.isNone(connection)) return yield* notConfigured("llm")
        const start = yield* Clock.currentTimeMillis
        const answer = yield* llm.reply({
          connection: connection.value,
          messages: [{ role: "user", content: PROMPT }],
          tools: [],
          timeoutSeconds: LLM_CHECK_TIMEOUT_SECONDS
        }, () => Effect.void).pipe(Effect.mapError(() => providerFailed("llm", connection.value.provider)))
        return {
          kind: "llm",
          provider: connection.value.provider,
          model: connection.value.model,
          latency_ms: yield* elapsedSince(start),
          reply: answer.text.trim()
        } satisfies ModelCheckResult
      })

    const checkTts = (organizationId: number) =>
      Effect.gen(function*() {
        const connection = yield* settings.speechFor(organizationId, "tts")
        if (Option.isNone(connection)) return yield* notConfigured("tts")
        const start = yield* Clock.currentTimeMillis
        const chunks = yield* speak(connection.value, PHRASE).pipe(
          Effect.tapError((failure) => logSpeechFailure("tts", failure)),
          Effect.mapError(() => providerFailed("tts", connection.value.provider))
        )
        const latency = yield* elapsedSince(start)
        const wav = monoPcm16Wav(Chunk.toReadonlyArray(chunks), SAMPLE_RATE)
        return {
          kind: "tts",
          provider: connection.value.provider,
          model: connection.value.model,
          latency_ms: latency,
          phrase: PHRASE,
          audio_wav_base64: Buffer.from(wav).toString("base64"),
          audio_bytes: wav.length,
          audio_duration_ms: Math.round((samplesOf(chunks) * 1000) / SAMPLE_RATE)
        } satisfies ModelCheckResult
      })

    /** Everything the provider finalized for the phrase, up to the end of the utterance. */
    const transcribe = (connection: SpeechConnection, pcm: Int16Array) =>
      Effect.gen(function*() {
        const session = yield* stt.open(connection, { sampleRate: SAMPLE_RATE, tag: "model-check" })
        for (let at = 0; at < pcm.length; at += CHUNK_SAMPLES) {
          yield* session.send(pcm.subarray(at, at + CHUNK_SAMPLES))
        }
        yield* session.finalize
        const finals = yield* session.events.pipe(
          Stream.takeUntil((event) => event._tag === "UtteranceEnd" || (event._tag === "Final" && event.speechFinal)),
          Stream.filterMap((event) => event._tag === "Final" ? Option.some(event.text) : Option.none()),
          Stream.runCollect,
          Effect.timeoutFail({
            duration: Duration.seconds(TRANSCRIPT_TIMEOUT_SECONDS),
            onTimeout: () => providerFailed("stt", connection.provider)
          })
        )
        return Chunk.toReadonlyArray(finals).filter((text) => text !== "").join(" ")
      }).pipe(Effect.scoped)

    const checkStt = (organizationId: number) =>
      Effect.gen(function*() {
        const connection = yield* settings.speechFor(organizationId, "stt")
        if (Option.isNone(connection)) return yield* notConfigured("stt")
        const voice = Option.getOrElse(yield* settings.speechFor(organizationId, "tts"), () => LOCAL_VOICE)
        const spoken = yield* speak(voice, PHRASE).pipe(
          Effect.tapError((failure) => logSpeechFailure("tts", failure)),
          Effect.mapError(() =>
            new UpstreamFailed({
              message:
                `The test phrase could not be spoken: the text-to-speech provider (${voice.provider}) could not be used; the server log has the details`
            })
          )
        )
        const pcm = flatten(spoken, (SAMPLE_RATE * TRAILING_SILENCE_MS) / 1000)
        const start = yield* Clock.currentTimeMillis
        const transcript = yield* transcribe(connection.value, pcm).pipe(
          Effect.tapError((failure) =>
            failure._tag === "SpeechFailed" ? logSpeechFailure("stt", failure) : Effect.void
          ),
          Effect.mapError((failure) =>
            failure._tag === "SpeechFailed" ? providerFailed("stt", connection.value.provider) : failure
          )
        )
        return {
          kind: "stt",
          provider: connection.value.provider,
          model: connection.value.model,
          latency_ms: yield* elapsedSince(start),
          phrase: PHRASE,
          transcript
        } satisfies ModelCheckResult
      })

    const check = Effect.fn("ModelChecks.check")(function*(principal: Principal, kind: ModelKind) {
      yield* Effect.annotateCurrentSpan({ kind })
      switch (kind) {
        case "llm":
          return yield* checkLlm(principal.organizationId)
        case "tts":
          return yield* checkTts(principal.organizationId)
        case "stt":
          return yield* checkStt(principal.organizationId)
      }
    })

    return ModelChecks.of({ check })
  })
).pipe(Layer.provide(Layer.mergeAll(LlmChatLive, SpeechToTextLive, TextToSpeechLive)))
