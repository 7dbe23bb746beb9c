import { afterEach, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Layer, Redacted, Stream } from "effect"
import { LlmChatLive } from "../layers/llm/openaiChat.ts"
import { LlmGeneratorLive } from "../layers/llm/openAiGenerator.ts"
import { REPLY_LIMITS } from "../layers/outbound/replyBody.ts"
import { twilioAdapter } from "../layers/telephony/carriers/twilio.ts"
import { SpeechToTextLive } from "../layers/voice/speech/speechToText.ts"
import { TextToSpeechLive } from "../layers/voice/speech/textToSpeech.ts"
import { LlmChat } from "../services/LlmChat.ts"
import { type LlmConnection, LlmGenerator } from "../services/LlmGenerator.ts"
import type { SpeechConnection } from "../services/ModelSettings.ts"
import { SpeechToText } from "../services/SpeechToText.ts"
import type { CarrierAccount } from "../services/Telephony.ts"
import { TextToSpeech } from "../services/TextToSpeech.ts"
import { type HugeReply, type HugeReplyOptions, startHugeReply } from "./support/hugeReply.ts"
import { LoopbackOutbound } from "./support/outbound.ts"

const MiB = 1024 * 1024
/** What each stand-in offers: far more than any reply may be, bounded so a client that reads it all still ends. */
const OFFERED = 256 * MiB

let standIn: HugeReply | undefined
afterEach(() => standIn?.close())

const huge = (options: Omit<HugeReplyOptions, "total"> & { readonly total?: number }) =>
  Effect.promise(async () => {
    standIn = await startHugeReply({ total: OFFERED, ...options })
    return standIn
  })

/** The reply was cut off near `limit`: the client stopped reading, it did not take the 256 MiB offered. */
const expectCutOffNear = (reply: HugeReply, limit: number) =>
  Effect.promise(() => reply.ended[0]!).pipe(Effect.map((ending) => {
    expect(ending).toBe("cut off")
    expect(reply.sent[0]).toBeLessThan(limit + 16 * MiB)
  }))

const rss = () => process.memoryUsage().rss

const llm = (baseUrl: string): LlmConnection => ({
  provider: "openai",
  model: "m",
  apiKey: Redacted.make("sk-test-key-123456"),
  baseUrl
})
const speech = (provider: string, baseUrl: string): SpeechConnection => ({
  provider,
  model: null,
  apiKey: "key-123456789",
  baseUrl,
  voice: null,
  language: null
})

describe("replies read from providers are bounded", () => {
  it.live("a carrier's 256 MiB JSON answer is cut off at 1 MiB and the call is not placed", () =>
    Effect.gen(function*() {
      const carrier = yield* huge({
        contentType: "application/json",
        prefix: "{\"sid\":\"CA",
        piece: "0123456789abcdef"
      })
      const before = rss()
      const account: CarrierAccount = {
        configurationId: 1,
        provider: "twilio",
        apiBaseUrl: carrier.url,
        credentials: { account_sid: "AC1", auth_token: "token-123456789" },
        machineDetection: false
      }
      const failure = yield* twilioAdapter.placeCall(account, {
        to: "+15550000001",
        from: "+15559990000",
        answerUrl: "http://127.0.0.1:1/answer",
        statusCallbackUrl: "http://127.0.0.1:1/status",
        timeLimitSeconds: 60
      }).pipe(Effect.flip, Effect.provide(LoopbackOutbound))
      expect(failure).toMatchObject({ _tag: "CallNotPlaced", permanent: false })
      expect(failure.message).toMatch(/exceeded 1048576 bytes/)
      yield* expectCutOffNear(carrier, REPLY_LIMITS.carrierJson)
      expect(rss() - before).toBeLessThan(64 * MiB)
    }))

  it.live("a reply announcing a length past the bound is refused before its body is read", () =>
    Effect.gen(function*() {
      const carrier = yield* huge({ contentType: "application/json", prefix: "{", declareLength: true })
      const account: CarrierAccount = {
        configurationId: 1,
        provider: "twilio",
        apiBaseUrl: carrier.url,
        credentials: { account_sid: "AC1", auth_token: "token-123456789" },
        machineDetection: false
      }
      const failure = yield* twilioAdapter.callStatus(account, { providerCallId: "CA1", liveCallId: null }).pipe(
        Effect.flip,
        Effect.provide(LoopbackOutbound)
      )
      expect(failure).toMatchObject({ _tag: "CarrierUnavailable" })
      yield* expectCutOffNear(carrier, 0)
    }))

  it.live("a chat stream is bounded in total, and each event by itself", () =>
    Effect.gen(function*() {
      const event = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "word ".repeat(150) } }] })}\n\n`
      const endless = yield* huge({ contentType: "text/event-stream", piece: event })
      const before = rss()
      const chat = (baseUrl: string) =>
        Effect.flatMap(LlmChat, (chat) =>
          chat.reply({ connection: llm(baseUrl), messages: [{ role: "user", content: "Hi" }], tools: [] }, () =>
            Effect.void)).pipe(Effect.either, Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound))))
      const total = yield* chat(endless.url)
      expect(Either.isLeft(total) && total.left).toMatchObject({ _tag: "LlmFailed", reason: "unreachable" })
      yield* expectCutOffNear(endless, REPLY_LIMITS.chatStream)
      expect(rss() - before).toBeLessThan(128 * MiB)
      yield* Effect.promise(() =>
        endless.close()
      )

      const oneEvent = yield* huge({
        contentType: "text/event-stream",
        prefix: "data: {\"choices\":[{\"delta\":{\"content\":\"",
        piece: "x"
      })
      const single = yield* chat(oneEvent.url)
      expect(Either.isLeft(single) && single.left).toMatchObject({ _tag: "LlmFailed" })
      yield* expectCutOffNear(oneEvent, REPLY_LIMITS.chatStreamEvent)
      yield* Effect.promise(() => oneEvent.close())

      const whole = yield* huge({
        contentType: "application/json",
        prefix: "{\"choices\":[{\"message\":{\"content\":\"",
        piece: "x"
      })
      const unstreamed = yield* chat(whole.url)
      expect(Either.isLeft(unstreamed) && unstreamed.left).toMatchObject({ _tag: "LlmFailed" })
      yield* expectCutOffNear(whole, REPLY_LIMITS.chatCompletionJson)
    }))

  it.live("a structured answer (extraction, disposition, templates) is cut off at 4 MiB", () =>
    Effect.gen(function*() {
      const model = yield* huge({
        contentType: "application/json",
        prefix: "{\"choices\":[{\"message\":{\"content\":\"",
        piece: "x"
      })
      const failure = yield* Effect.flatMap(LlmGenerator, (generator) =>
        generator.generateStructured({
          connection: llm(model.url),
          messages: [{ role: "user", content: "Hi" }],
          schemaName: "s",
          jsonSchema: { type: "object" }
        })).pipe(Effect.flip, Effect.provide(LlmGeneratorLive.pipe(Layer.provide(LoopbackOutbound))))
      expect(failure).toMatchObject({ _tag: "LlmFailed", reason: "unreachable" })
      yield* expectCutOffNear(model, REPLY_LIMITS.chatCompletionJson)
    }))

  it.live("a sentence's audio past 16 MiB fails the speech instead of filling memory", () =>
    Effect.gen(function*() {
      const voice = yield* huge({ contentType: "audio/pcm", piece: Buffer.alloc(64 * 1024, 1) })
      const failure = yield* Effect.flatMap(TextToSpeech, (tts) =>
        Stream.runDrain(tts.synthesize(speech("openai", voice.url), "Hello there.", 8000))).pipe(
          Effect.flip,
          Effect.provide(TextToSpeechLive.pipe(Layer.provide(LoopbackOutbound)))
        )
      expect(failure).toMatchObject({
        _tag: "SpeechFailed",
        provider: "openai",
        message: expect.stringMatching(/larger than 16777216 bytes/)
      })
      yield* expectCutOffNear(voice, REPLY_LIMITS.speechAudio)
    }))

  it.live("a transcription's JSON past 1 MiB fails the transcription", () =>
    Effect.gen(function*() {
      const transcriber = yield* huge({ contentType: "application/json", prefix: "{\"text\":\"", piece: "x" })
      const failure = yield* Effect.scoped(
        Effect.gen(function*() {
          const session = yield* Effect.flatMap(SpeechToText, (stt) =>
            stt.open(speech("openai", transcriber.url), { sampleRate: 8000 }))
          yield* session.send(new Int16Array(8000))
          yield* session.finalize
          return yield* Stream.runDrain(session.events).pipe(Effect.flip)
        })
      ).pipe(Effect.provide(SpeechToTextLive.pipe(Layer.provide(LoopbackOutbound))))
      expect(failure).toMatchObject({
        _tag: "SpeechFailed",
        provider: "openai",
        message: expect.stringMatching(/larger than 1048576 bytes/)
      })
      yield* expectCutOffNear(transcriber, REPLY_LIMITS.transcriptionJson)
    }))
})
