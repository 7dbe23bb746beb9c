import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Layer, Schedule, Stream } from "effect"
import { TextToSpeechLive } from "../layers/voice/speech/textToSpeech.ts"
import type { SpeechConnection } from "../services/ModelSettings.ts"
import { TextToSpeech } from "../services/TextToSpeech.ts"
import { resample } from "../src/audio/resample.ts"
import { toInt16 } from "../src/audio/sampleFormats.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { LoopbackOutbound } from "./support/outbound.ts"
import { speak } from "./support/speechAudio.ts"

/** The client as the suite uses it: its stand-ins listen on 127.0.0.1. */
const TextToSpeechLiveOverLoopback = TextToSpeechLive.pipe(Layer.provide(LoopbackOutbound))

const LINE = "Hello, this is Ava from Acme Dental."

let apis: FakeSpeechApis
let slowApis: FakeSpeechApis

beforeAll(async () => {
  apis = await startFakeSpeechApis()
  slowApis = await startFakeSpeechApis({ chunkMs: 20, chunkIntervalMs: 20 })
})
afterAll(async () => {
  await apis.close()
  await slowApis.close()
})

const connection = (provider: string, overrides: Partial<SpeechConnection> = {}): SpeechConnection => ({
  provider,
  model: null,
  apiKey: apis.apiKey,
  baseUrl: apis.url,
  voice: null,
  language: null,
  ...overrides
})

const synthesize = (speech: SpeechConnection, text: string, rate: 8000 | 16000) =>
  Effect.flatMap(TextToSpeech, (tts) => Stream.runCollect(tts.synthesize(speech, text, rate))).pipe(
    Effect.map(Chunk.toReadonlyArray),
    Effect.provide(TextToSpeechLiveOverLoopback)
  )

const joined = (chunks: ReadonlyArray<Int16Array>) => {
  const out = new Int16Array(chunks.reduce((total, chunk) => total + chunk.length, 0))
  let at = 0
  for (const chunk of chunks) {
    out.set(chunk, at)
    at += chunk.length
  }
  return out
}

const dbfs = (samples: Int16Array) => {
  let sum = 0
  for (const sample of samples) sum += sample * sample
  return 20 * Math.log10(Math.sqrt(sum / samples.length) / 32768)
}

const lastRequest = (service: FakeSpeechApis) => service.requests.at(-1)!

describe("text-to-speech providers", () => {
  for (const rate of [8000, 16000] as const) {
    it.live(`ElevenLabs streams pcm_${rate} as it arrives, in chunks of at most 100 ms`, () =>
      Effect.gen(function*() {
        const chunks = yield* synthesize(connection("elevenlabs", { voice: "voice-123" }), LINE, rate)
        expect(joined(chunks)).toEqual(yield* Effect.promise(() => speak(LINE, rate)))
        expect(chunks.length).toBeGreaterThan(5)
        expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThanOrEqual(rate / 10)
        const request = lastRequest(apis)
        expect(request).toMatchObject({
          api: "elevenlabs",
          path: "/v1/text-to-speech/voice-123/stream",
          completed: true
        })
        expect(request.query.get("output_format")).toBe(`pcm_${rate}`)
        expect(request.body).toEqual({ text: LINE, model_id: "eleven_flash_v2_5" })
      }))

    it.live(`Cartesia streams raw pcm_s16le at ${rate} Hz`, () =>
      Effect.gen(function*() {
        const chunks = yield* synthesize(connection("cartesia", { language: "en-US" }), LINE, rate)
        expect(joined(chunks)).toEqual(yield* Effect.promise(() => speak(LINE, rate)))
        const request = lastRequest(apis)
        expect(request.headers["cartesia-version"]).toBe("2025-04-16")
        expect(request.body).toMatchObject({
          transcript: LINE,
          model_id: "sonic-2",
          voice: { mode: "id" },
          output_format: { container: "raw", encoding: "pcm_s16le", sample_rate: rate },
          language: "en"
        })
      }))

    it.live(`Deepgram speaks linear16 at ${rate} Hz without a WAV header`, () =>
      Effect.gen(function*() {
        const chunks = yield* synthesize(connection("deepgram", { voice: "aura-2-andromeda-en" }), LINE, rate)
        expect(joined(chunks)).toEqual(yield* Effect.promise(() => speak(LINE, rate)))
        const request = lastRequest(apis)
        expect(Object.fromEntries(request.query)).toEqual({
          model: "aura-2-andromeda-en",
          encoding: "linear16",
          sample_rate: `${rate}`,
          container: "none"
        })
      }))

    it.live(`OpenAI's 24 kHz pcm is resampled to ${rate} Hz as it streams`, () =>
      Effect.gen(function*() {
        const chunks = yield* synthesize(connection("openai", { baseUrl: `${apis.url}/v1` }), LINE, rate)
        const source = yield* Effect.promise(() => speak(LINE, 24000))
        const floats = Float32Array.from(source, (sample) => sample / 32768)
        expect(joined(chunks)).toEqual(toInt16(resample(floats, 24000, rate)))
        expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThanOrEqual(rate / 10)
        expect(lastRequest(apis).body).toEqual({
          model: "gpt-4o-mini-tts",
          input: LINE,
          voice: "alloy",
          response_format: "pcm"
        })
      }))

    it.live(`the local voice speaks audibly at ${rate} Hz`, () =>
      Effect.gen(function*() {
        const chunks = yield* synthesize(
          connection("local", { apiKey: null, baseUrl: null }),
          "Thanks for calling.",
          rate
        )
        const audio = joined(chunks)
        expect(audio.length / rate).toBeGreaterThan(0.5)
        expect(dbfs(audio)).toBeGreaterThan(-35)
        expect(Math.max(...chunks.map((chunk) => chunk.length))).toBeLessThanOrEqual(rate / 10)
      }))
  }

  for (const provider of ["elevenlabs", "cartesia", "deepgram", "openai"]) {
    it.live(`stopping the ${provider} stream aborts its HTTP request`, () =>
      Effect.gen(function*() {
        const speech = connection(provider, { baseUrl: provider === "openai" ? `${slowApis.url}/v1` : slowApis.url })
        const first = yield* Effect.flatMap(TextToSpeech, (tts) =>
          tts.synthesize(speech, "This is a long answer that the caller will interrupt before it is over.", 8000).pipe(
            Stream.take(2),
            Stream.runCollect
          )).pipe(Effect.provide(TextToSpeechLiveOverLoopback))
        expect(Chunk.size(first)).toBe(2)
        const request = lastRequest(slowApis)
        yield* Effect.sync(() =>
          request.aborted
        ).pipe(
          Effect.repeat({ until: (aborted) => aborted, schedule: Schedule.spaced("10 millis") }),
          Effect.timeout("2 seconds")
        )
        expect(request).toMatchObject({ api: provider, aborted: true, completed: false })
        expect(request.bytesSent).toBeLessThan(request.audioSeconds * request.sampleRate! * 2)
      }))
  }

  it.live("waits out the provider's first-byte delay", () =>
    Effect.gen(function*() {
      apis.setFirstByteDelay(300)
      const started = Date.now()
      yield* Effect.flatMap(TextToSpeech, (tts) =>
        tts.synthesize(connection("elevenlabs"), LINE, 8000).pipe(Stream.runHead)).pipe(
          Effect.provide(TextToSpeechLiveOverLoopback),
          Effect.ensuring(Effect.sync(() =>
            apis.setFirstByteDelay(0)
          ))
        )
      expect(Date.now() - started).toBeGreaterThanOrEqual(290)
    }))

  it.live("a wrong key is refused, a dead host unreachable, an unknown provider unsupported", () =>
    Effect.gen(function*() {
      const refused = yield* synthesize(connection("cartesia", { apiKey: "wrong-key" }), LINE, 8000).pipe(Effect.flip)
      expect(refused).toMatchObject({ _tag: "SpeechFailed", provider: "cartesia", reason: "refused" })
      expect(refused.message).not.toContain("wrong-key")
      const missing = yield* synthesize(connection("openai", { apiKey: null }), LINE, 8000).pipe(Effect.flip)
      expect(missing).toMatchObject({ reason: "refused" })
      const unreachable = yield* synthesize(connection("deepgram", { baseUrl: "http://127.0.0.1:9" }), LINE, 8000).pipe(
        Effect.flip
      )
      expect(unreachable).toMatchObject({ _tag: "SpeechFailed", provider: "deepgram", reason: "unreachable" })
      const unknown = yield* synthesize(connection("polly"), LINE, 8000).pipe(Effect.flip)
      expect(unknown).toMatchObject({ _tag: "SpeechFailed", provider: "polly", reason: "unsupported" })
      expect(yield* synthesize(connection("elevenlabs"), "   ", 8000)).toEqual([])
    }))
})
