import { expect, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import { VoiceActivityLive } from "../layers/voice/speech/voiceActivity.ts"
import { VoiceActivity, type VoiceActivityEvent, type VoiceSampleRate } from "../services/VoiceActivity.ts"
import { speak } from "./support/speechAudio.ts"

const LINE = "Yes, I would like to hear more about the offer."

const silence = (rate: number, seconds: number) => new Int16Array(Math.round(rate * seconds))

/** Deterministic white noise (a linear congruential generator) at about -30 dBFS. */
const noise = (rate: number, seconds: number) => {
  let seed = 12345
  return Int16Array.from({ length: Math.round(rate * seconds) }, () => {
    seed = (seed * 1103515245 + 12345) % 2147483648
    return Math.round((seed / 2147483648 - 0.5) * 2000)
  })
}

const concat = (...parts: ReadonlyArray<Int16Array>) => {
  const out = new Int16Array(parts.reduce((total, part) => total + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}

/** The end of the last 10 ms block above -40 dBFS. */
const lastAudibleMs = (audio: Int16Array, rate: number) => {
  const block = rate / 100
  let end = 0
  for (let at = 0; at < audio.length; at += block) {
    const part = audio.subarray(at, at + block)
    const rms = Math.sqrt(part.reduce((sum, sample) => sum + sample * sample, 0) / part.length)
    if (rms > 32768 * 0.01) end = ((at + part.length) * 1000) / rate
  }
  return end
}

/** Feeds the audio in 20 ms media frames, as a telephony stream delivers it. */
const detect = (rate: VoiceSampleRate, audio: Int16Array) =>
  Effect.gen(function*() {
    const vad = yield* VoiceActivity
    const detector = yield* vad.detector(rate)
    const frame = rate / 50
    const events: Array<VoiceActivityEvent> = []
    for (let at = 0; at < audio.length; at += frame) {
      events.push(...(yield* detector.push(audio.subarray(at, at + frame))))
    }
    return events
  })

const workers = (count: number) =>
  VoiceActivityLive.pipe(
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["TALKGRAPH_VAD_WORKERS", `${count}`]]))))
  )

for (const [engine, count] of [["an inference worker", 1], ["the event loop", 0]] as const) {
  layer(workers(count), { timeout: 120_000 })(`Silero VAD on ${engine}`, (it) => {
    for (const rate of [8000, 16000] as const) {
      it.effect(`finds eSpeak speech at ${rate} Hz, dated where it is`, () =>
        Effect.gen(function*() {
          const speech = yield* Effect.promise(() => speak(LINE, rate))
          const speechMs = (speech.length * 1000) / rate
          const events = yield* detect(rate, concat(silence(rate, 1), speech, silence(rate, 1)))
          expect(events.map((event) => event._tag)).toEqual(["SpeechStarted", "SpeechEnded"])
          const [started, ended] = events as [VoiceActivityEvent, Extract<VoiceActivityEvent, { _tag: "SpeechEnded" }>]
          // Dated to the 32 ms window; eSpeak's clip starts and ends with a little silence of its own.
          expect(started.atMs).toBeGreaterThanOrEqual(1000 - 32)
          expect(started.atMs).toBeLessThan(1250)
          expect(ended.atMs).toBeGreaterThan(1000 + speechMs - 400)
          expect(ended.atMs).toBeLessThanOrEqual(1000 + speechMs + 100)
          expect(ended.speechMs).toBeGreaterThan(speechMs * 0.7)
          // The end is where the voice stopped (its last 10 ms above -40 dBFS), not where Silero's
          // probability fell a window or two later: endpointing counts from the caller's silence.
          const voiceEndMs = 1000 + lastAudibleMs(speech, rate)
          expect(ended.atMs).toBeGreaterThanOrEqual(voiceEndMs - 10)
          expect(ended.atMs).toBeLessThanOrEqual(voiceEndMs + 30)
        }))

      it.effect(`hears nothing in silence or steady noise at ${rate} Hz`, () =>
        Effect.gen(function*() {
          expect(yield* detect(rate, silence(rate, 2))).toEqual([])
          expect(yield* detect(rate, noise(rate, 3))).toEqual([])
        }))
    }

    it.effect("finds speech 30 dB quieter than eSpeak's, far below a phone line's level", () =>
      Effect.gen(function*() {
        const rate = 8000
        const speech = (yield* Effect.promise(() => speak(LINE, rate))).map((sample) => Math.round(sample / 31.6))
        const events = yield* detect(rate, concat(silence(rate, 1), speech, silence(rate, 1)))
        expect(events.map((event) => event._tag)).toEqual(["SpeechStarted", "SpeechEnded"])
        expect(events[0]!.atMs).toBeLessThan(1250)
      }))

    it.effect("gives every call of a batch the answer it would get alone", () =>
      Effect.gen(function*() {
        const rate = 8000
        const audio = concat(silence(rate, 0.5), yield* Effect.promise(() => speak(LINE, rate)), silence(rate, 0.6))
        const alone = yield* detect(rate, audio)
        const together = yield* Effect.all(Array.from({ length: 12 }, () => detect(rate, audio)), {
          concurrency: "unbounded"
        })
        for (const events of together) expect(events).toEqual(alone)
      }))

    it.effect("a raised threshold mid-call stops reporting quieter speech", () =>
      Effect.gen(function*() {
        const rate = 16000
        const vad = yield* VoiceActivity
        const detector = yield* vad.detector(rate)
        const speech = yield* Effect.promise(() => speak(LINE, rate))
        detector.configure({ threshold: 1.01 })
        expect(yield* detector.push(concat(speech, silence(rate, 1)))).toEqual([])
        detector.configure({ threshold: 0.5 })
        expect((yield* detector.push(concat(speech, silence(rate, 1)))).map((event) => event._tag)).toEqual([
          "SpeechStarted",
          "SpeechEnded"
        ])
      }))
  })
}
