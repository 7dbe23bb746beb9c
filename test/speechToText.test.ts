import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Exit, Fiber, Layer, Option, Schedule, Scope, Stream, TestClock } from "effect"
import { SpeechToTextLive } from "../layers/voice/speech/speechToText.ts"
import type { SpeechConnection } from "../services/ModelSettings.ts"
import { SpeechToText, type TranscriptEvent } from "../services/SpeechToText.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { LoopbackOutbound } from "./support/outbound.ts"
import { speak } from "./support/speechAudio.ts"

/** The client as the suite uses it: its stand-ins listen on 127.0.0.1. */
const SpeechToTextLiveOverLoopback = SpeechToTextLive.pipe(Layer.provide(LoopbackOutbound))

let deepgram: FakeDeepgram
let apis: FakeSpeechApis

beforeAll(async () => {
  deepgram = await startFakeDeepgram()
  apis = await startFakeSpeechApis()
})
afterAll(async () => {
  await deepgram.close()
  await apis.close()
})

const connection = (overrides: Partial<SpeechConnection>): SpeechConnection => ({
  provider: "deepgram",
  model: null,
  apiKey: deepgram.apiKey,
  baseUrl: deepgram.url,
  voice: null,
  language: "en",
  ...overrides
})

const silence = (rate: number, seconds: number) => new Int16Array(Math.round(rate * seconds))

/** Sends audio in 20 ms frames, as the call delivers it (faster than real time: the fake keeps the audio clock). */
const sendAll = (
  send: (pcm: Int16Array) => Effect.Effect<void, unknown>,
  rate: number,
  ...parts: ReadonlyArray<Int16Array>
) =>
  Effect.forEach(
    parts,
    (audio) =>
      Effect.forEach(Array.from({ length: Math.ceil(audio.length / (rate / 50)) }, (_, i) => i), (i) =>
        send(audio.subarray(i * (rate / 50), (i + 1) * (rate / 50))))
  )

const open = (speech: SpeechConnection, rate: 8000 | 16000, tag?: string) =>
  Effect.flatMap(SpeechToText, (stt) => stt.open(speech, { sampleRate: rate, tag }))

/** Collects a session's events as they arrive, for the rest of the test's scope. */
const collect = (events: Stream.Stream<TranscriptEvent, unknown>) =>
  Effect.gen(function*() {
    const seen: Array<TranscriptEvent> = []
    yield* events.pipe(
      Stream.runForEach((event) => Effect.sync(() => seen.push(event))),
      Effect.ignore,
      Effect.forkScoped
    )
    return seen
  })

const waitUntil = (condition: () => boolean) =>
  Effect.sync(condition).pipe(
    Effect.repeat({ until: (done) => done, schedule: Schedule.spaced("20 millis") }),
    Effect.timeoutFail({ duration: "10 seconds", onTimeout: () => new Error("condition not met within 10 s") })
  )

const withoutTrailingQuiet = (pcm: Int16Array) => {
  let end = pcm.length
  while (end > 0 && Math.abs(pcm[end - 1]!) < 300) end--
  return pcm.subarray(0, end)
}

const finalsOf = (events: ReadonlyArray<TranscriptEvent>) =>
  events.filter((event): event is Extract<TranscriptEvent, { _tag: "Final" }> => event._tag === "Final")

describe("Deepgram live transcription", () => {
  it.live("streams interim and final results and utterance ends, timed from the audio", () =>
    Effect.gen(function*() {
      const rate = 8000
      deepgram.script("run-interim", ["Hello?", "Yes, I am interested"])
      const hello = yield* Effect.promise(() => speak("Hello?", rate))
      const interested = yield* Effect.promise(() => speak("Yes, I am interested", rate))
      const session = yield* open(connection({}), rate, "run-interim")
      const events = yield* collect(session.events)
      yield* sendAll(session.send, rate, silence(rate, 0.3), hello, silence(rate, 1.2), interested, silence(rate, 1.2))
      yield* waitUntil(() => events.filter((event) => event._tag === "UtteranceEnd").length === 2)

      const finals = finalsOf(events)
      expect(finals.map((event) => [event.text, event.speechFinal])).toEqual([
        ["Hello?", true],
        ["Yes, I am interested", true]
      ])
      expect(finals[0]!.startMs).toBeGreaterThanOrEqual(300)
      expect(finals[0]!.startMs).toBeLessThan(450)
      expect(finals[0]!.endMs).toBeLessThanOrEqual(300 + (hello.length * 1000) / rate)
      expect(finals[1]!.startMs).toBeGreaterThan(finals[0]!.endMs + 1000)
      const tags = events.map((event) => event._tag)
      expect(tags.indexOf("Interim")).toBeLessThan(tags.indexOf("Final"))
      expect(tags.lastIndexOf("UtteranceEnd")).toBeGreaterThan(tags.lastIndexOf("Final"))

      const expectedSeconds = (0.3 * rate + hello.length + 1.2 * rate + interested.length + 1.2 * rate) / rate
      expect(yield* session.audioSeconds).toBeCloseTo(expectedSeconds, 3)
      const server = deepgram.connections.find((candidate) => candidate.tag === "run-interim")!
      expect(server.audioSeconds).toBeCloseTo(expectedSeconds, 3)
      expect(Object.fromEntries(server.query)).toMatchObject({
        encoding: "linear16",
        sample_rate: "8000",
        channels: "1",
        interim_results: "true",
        endpointing: "300",
        utterance_end_ms: "1000",
        vad_events: "true",
        model: "nova-3",
        language: "en",
        tag: "run-interim"
      })
    }).pipe(Effect.scoped, Effect.provide(SpeechToTextLiveOverLoopback)))

  it.live("finalize closes an utterance still open, and closing the scope sends CloseStream", () =>
    Effect.gen(function*() {
      const rate = 16000
      deepgram.script("run-finalize", ["I would like to book a table"])
      // Cut eSpeak's trailing silence: the utterance is still open when finalize is sent.
      const line = withoutTrailingQuiet(yield* Effect.promise(() => speak("I would like to book a table", rate)))
      const scope = yield* Scope.make()
      const session = yield* open(connection({}), rate, "run-finalize").pipe(Scope.extend(scope))
      const firstFinal = yield* session.events.pipe(
        Stream.filter((event) => event._tag === "Final"),
        Stream.runHead,
        Effect.fork
      )
      yield* sendAll(session.send, rate, line)
      yield* session.finalize
      const final = yield* Fiber.join(firstFinal).pipe(Effect.timeout("5 seconds"))
      expect(Option.getOrThrow(final)).toMatchObject({
        _tag: "Final",
        text: "I would like to book a table",
        speechFinal: true
      })
      const server = deepgram.connections.find((candidate) => candidate.tag === "run-finalize")!
      expect(server.sent.filter((message) => message.type === "Results" && message.is_final)).toMatchObject([{
        from_finalize: true
      }])
      expect(server.finalizes).toBe(1)
      expect(server.closeStreamReceived).toBe(false)
      yield* Scope.close(scope, Exit.void)
      expect(server.closeStreamReceived).toBe(true)
      yield* Effect.sleep("50 millis")
      expect(server.closed).toBe(true)
      expect(server.sent.at(-1)).toMatchObject({ type: "Metadata" })
    }).pipe(Effect.provide(SpeechToTextLiveOverLoopback)))

  it.scoped("keeps an idle stream open with KeepAlive", () =>
    Effect.gen(function*() {
      const session = yield* open(connection({}), 8000, "run-idle")
      yield* session.send(silence(8000, 0.02))
      const server = deepgram.connections.find((candidate) => candidate.tag === "run-idle")!
      yield* TestClock.adjust("4 seconds")
      expect(server.keepAlives).toBe(0)
      yield* TestClock.adjust("2 seconds")
      yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 100)))
      expect(server.keepAlives).toBe(1)
    }).pipe(Effect.provide(SpeechToTextLiveOverLoopback)))

  it.live("a wrong key is refused, a dead host is unreachable, an unknown provider unsupported", () =>
    Effect.gen(function*() {
      const refused = yield* open(connection({ apiKey: "wrong-key" }), 8000).pipe(Effect.flip)
      expect(refused).toMatchObject({ _tag: "SpeechFailed", provider: "deepgram", reason: "refused" })
      expect(refused.message).not.toContain("wrong-key")
      const unreachable = yield* open(connection({ baseUrl: "http://127.0.0.1:9" }), 8000).pipe(Effect.flip)
      expect(unreachable).toMatchObject({ _tag: "SpeechFailed", reason: "unreachable" })
      const noKey = yield* open(connection({ apiKey: null }), 8000).pipe(Effect.flip)
      expect(noKey).toMatchObject({ reason: "refused" })
      const unknown = yield* open(connection({ provider: "whisper-local" }), 8000).pipe(Effect.flip)
      expect(unknown).toMatchObject({ _tag: "SpeechFailed", reason: "unsupported" })
    }).pipe(Effect.scoped, Effect.provide(SpeechToTextLiveOverLoopback)))

  it.live("a stream the provider drops fails the events and later sends", () =>
    Effect.gen(function*() {
      const session = yield* open(connection({}), 8000, "run-dropped")
      const events = yield* session.events.pipe(Stream.runDrain, Effect.flip, Effect.fork)
      yield* session.send(silence(8000, 0.1))
      yield* Effect.sleep("50 millis")
      deepgram.dropConnections()
      const failure = yield* Fiber.join(events).pipe(Effect.timeout("5 seconds"))
      expect(failure).toMatchObject({ _tag: "SpeechFailed", reason: "protocol" })
      expect(failure.message).toContain("1011")
      expect(yield* session.send(silence(8000, 0.02)).pipe(Effect.flip)).toMatchObject({ _tag: "SpeechFailed" })
    }).pipe(Effect.scoped, Effect.provide(SpeechToTextLiveOverLoopback)))
})

describe("OpenAI transcription", () => {
  const openai = () =>
    connection({ provider: "openai", apiKey: apis.apiKey, baseUrl: `${apis.url}/v1`, model: "gpt-4o-mini-transcribe" })

  it.live("posts each finalized utterance as a WAV and answers a speech-final Final", () =>
    Effect.gen(function*() {
      const rate = 16000
      apis.scriptTranscriptions(["Yes, I am interested", "Call me tomorrow"])
      const first = yield* Effect.promise(() => speak("Yes, I am interested", rate))
      const second = yield* Effect.promise(() => speak("Call me tomorrow", rate))
      const session = yield* open(openai(), rate)
      const finals = yield* session.events.pipe(Stream.take(2), Stream.runCollect, Effect.fork)
      yield* sendAll(session.send, rate, first)
      yield* session.finalize
      yield* sendAll(session.send, rate, silence(rate, 0.5), second)
      yield* session.finalize
      const events = Chunk.toReadonlyArray(yield* Fiber.join(finals).pipe(Effect.timeout("10 seconds")))
      expect(events).toEqual([
        {
          _tag: "Final",
          text: "Yes, I am interested",
          speechFinal: true,
          startMs: 0,
          endMs: Math.round((first.length * 1000) / rate)
        },
        {
          _tag: "Final",
          text: "Call me tomorrow",
          speechFinal: true,
          startMs: Math.round((first.length * 1000) / rate),
          endMs: Math.round(((first.length + 0.5 * rate + second.length) * 1000) / rate)
        }
      ])
      const posted = apis.requests.filter((request) => request.api === "openai-transcription").slice(-2)
      expect(posted.map((request) => [request.sampleRate, request.body])).toEqual([
        [16000, { model: "gpt-4o-mini-transcribe", response_format: "json", language: "en" }],
        [16000, { model: "gpt-4o-mini-transcribe", response_format: "json", language: "en" }]
      ])
      expect(posted[0]!.audioSeconds).toBeCloseTo(first.length / rate, 3)
      expect(yield* session.audioSeconds).toBeCloseTo((first.length + 0.5 * rate + second.length) / rate, 3)
    }).pipe(Effect.scoped, Effect.provide(SpeechToTextLiveOverLoopback)))

  it.live("a wrong key fails the events as refused", () =>
    Effect.gen(function*() {
      const session = yield* open(connection({ ...openai(), apiKey: "wrong-key" }), 8000)
      const failure = yield* session.events.pipe(Stream.runDrain, Effect.flip, Effect.fork)
      yield* session.send(silence(8000, 0.5))
      yield* session.finalize
      expect(yield* Fiber.join(failure).pipe(Effect.timeout("5 seconds"))).toMatchObject({
        _tag: "SpeechFailed",
        provider: "openai",
        reason: "refused"
      })
    }).pipe(Effect.scoped, Effect.provide(SpeechToTextLiveOverLoopback)))
})
