import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Schedule, Stream } from "effect"
import { LlmChatLive } from "../layers/llm/openaiChat.ts"
import { LlmChat } from "../services/LlmChat.ts"
import type { LlmConnection } from "../services/LlmGenerator.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"

let llm: ScriptedLlm
beforeAll(async () => {
  llm = await startScriptedLlm()
})
afterAll(() => llm.close())

const ask = (tools: ReadonlyArray<{ name: string; description: string }> = []) =>
  Effect.map(LlmChat, (chat) => {
    const connection: LlmConnection = { provider: "openai", model: "scripted", apiKey: null, baseUrl: llm.baseUrl }
    return chat.stream({ connection, messages: [{ role: "user", content: "Hello?" }], tools })
  })

/** Polls until the stand-in saw its request closed early, or fails after two seconds. */
const abandonedByClient = Effect.sync(() => llm.requests[0]?.abandoned() === true).pipe(
  Effect.repeat({ until: (abandoned) => abandoned, schedule: Schedule.spaced("20 millis") }),
  Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => new Error("the LLM request was never aborted") })
)

describe("streaming chat completions (openai client against an OpenAI-compatible stand-in)", () => {
  it.live("yields the text as it arrives, then the complete tool calls, then the provider's usage", () =>
    Effect.gen(function* () {
      llm.reset()
      llm.enqueue(reply.toolCalls([{ name: "book_visit", arguments: { day: "Tuesday, after the long weekend" } }], {
        content: "Let me book that.",
        usage: { prompt_tokens: 31, completion_tokens: 9 }
      }))
      const chunks = Chunk.toReadonlyArray(yield* Stream.runCollect(yield* ask([{ name: "book_visit", description: "Book it" }])))
      expect(chunks.filter((chunk) => chunk._tag === "Text").map((chunk) => chunk.text).join("")).toBe("Let me book that.")
      expect(chunks.slice(-2)).toEqual([
        { _tag: "ToolCall", name: "book_visit", arguments: JSON.stringify({ day: "Tuesday, after the long weekend" }) },
        { _tag: "Usage", prompt_tokens: 31, completion_tokens: 9 }
      ])
      expect(llm.requests[0]!.toolNames).toEqual(["book_visit"])
      expect(llm.requests[0]!.abandoned()).toBe(false)
    }).pipe(Effect.provide(LlmChatLive)))

  it.live("aborts the provider's request when the reader stops before the reply ends", () =>
    Effect.gen(function* () {
      llm.reset()
      llm.enqueue(reply.content("one two three four five six seven eight", { chunkDelayMs: 100 }))
      const firstWords = yield* Stream.runCollect(Stream.take(yield* ask(), 2))
      expect(Chunk.toReadonlyArray(firstWords).map((chunk) => chunk._tag === "Text" && chunk.text).join("")).toBe("one two")
      yield* abandonedByClient
    }).pipe(Effect.provide(LlmChatLive)))

  it.live("aborts the provider's request when the reading fiber is interrupted (a barge-in, a client gone)", () =>
    Effect.gen(function* () {
      llm.reset()
      llm.enqueue(reply.content("one two three four five six seven eight", { chunkDelayMs: 100 }))
      const reading = yield* Effect.fork(Stream.runDrain(yield* ask()))
      yield* Effect.sleep("150 millis")
      yield* Fiber.interrupt(reading)
      yield* abandonedByClient
    }).pipe(Effect.provide(LlmChatLive)))

  it.live("fails with a classified error, never the provider's text, when the provider refuses or breaks off", () =>
    Effect.gen(function* () {
      llm.reset()
      llm.enqueue(reply.error(429), reply.breakOff("Half an answer"))
      const refused = yield* Effect.either(Stream.runCollect(yield* ask()))
      expect(Either.isLeft(refused) && refused.left).toMatchObject({ _tag: "LlmFailed", reason: "rejected", status: 429 })
      expect(JSON.stringify(refused)).not.toContain("internal-detail")
      const received: Array<string> = []
      const broken = yield* Effect.either(Stream.runForEach(yield* ask(), (chunk) => Effect.sync(() => chunk._tag === "Text" && received.push(chunk.text))))
      expect(received.join("")).toBe("Half an answer")
      expect(Either.isLeft(broken) && broken.left).toMatchObject({ _tag: "LlmFailed", reason: "unreachable" })
    }).pipe(Effect.provide(LlmChatLive)))
})
