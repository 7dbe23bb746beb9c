import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Layer, Redacted, Schedule } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { LlmChatLive } from "../layers/llm/openaiChat.ts"
import { LlmChat } from "../services/LlmChat.ts"
import type { LlmConnection } from "../services/LlmGenerator.ts"
import { LoopbackOutbound } from "./support/outbound.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"

let llm: ScriptedLlm
beforeAll(async () => {
  llm = await startScriptedLlm()
})
afterAll(() => llm.close())

const connectionTo = (baseUrl: string, apiKey: string | null = null): LlmConnection => ({
  provider: "openai",
  model: "scripted",
  apiKey: apiKey === null ? null : Redacted.make(apiKey),
  baseUrl
})

/** Asks the stand-in; the text pieces handed to `onText` are collected in `pieces`. */
const ask = (
  options: {
    tools?: ReadonlyArray<{ name: string; description: string }>
    timeoutSeconds?: number
    connection?: LlmConnection
  } = {}
) =>
  Effect.flatMap(LlmChat, (chat) => {
    const pieces: Array<string> = []
    return chat.reply(
      {
        connection: options.connection ?? connectionTo(llm.baseUrl),
        messages: [{ role: "user", content: "Hello?" }],
        tools: options.tools ?? [],
        ...(options.timeoutSeconds ? { timeoutSeconds: options.timeoutSeconds } : {})
      },
      (text) => Effect.sync(() => pieces.push(text))
    ).pipe(Effect.map((answer) => ({ ...answer, pieces })), Effect.either, Effect.map((result) => ({ result, pieces })))
  })

/** Polls until the stand-in saw its request closed early, or fails after two seconds. */
const abandonedByClient = Effect.sync(() => llm.requests[0]?.abandoned() === true).pipe(
  Effect.repeat({ until: (abandoned) => abandoned, schedule: Schedule.spaced("20 millis") }),
  Effect.timeoutFail({ duration: "2 seconds", onTimeout: () => new Error("the LLM request was never aborted") })
)

describe("streaming chat completions against an OpenAI-compatible stand-in", () => {
  it.live("hands over the text piece by piece as it arrives, then answers the whole reply with its tool calls and the provider's usage", () =>
    Effect.gen(function*() {
      llm.reset()
      llm.enqueue(reply.toolCalls([{ name: "book_visit", arguments: { day: "Tuesday, after the long weekend" } }], {
        content: "Let me book that.",
        usage: { prompt_tokens: 31, completion_tokens: 9 }
      }))
      const { result, pieces } = yield* ask({ tools: [{ name: "book_visit", description: "Book it" }] })
      expect(Either.isRight(result)).toBe(true)
      const answer = Either.getOrThrow(result)
      expect(pieces.length).toBeGreaterThan(1)
      expect(pieces.join("")).toBe("Let me book that.")
      expect(answer.text).toBe("Let me book that.")
      expect(answer.toolCalls).toEqual([{
        id: "call_1",
        name: "book_visit",
        arguments: JSON.stringify({ day: "Tuesday, after the long weekend" })
      }])
      expect(answer.usage).toEqual({ prompt_tokens: 31, completion_tokens: 9 })
      const request = llm.requests[0]!
      expect(request.toolNames).toEqual(["book_visit"])
      expect(request.body).toMatchObject({
        model: "scripted",
        stream: true,
        stream_options: { include_usage: true },
        messages: [{ role: "user", content: "Hello?" }]
      })
      expect(request.abandoned()).toBe(false)
    }).pipe(Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound)))))

  it.live("sends the organization's key as a bearer token, and no authorization at all without one", () =>
    Effect.gen(function*() {
      llm.reset()
      llm.enqueue(reply.content("One."), reply.content("Two."))
      yield* ask({ connection: connectionTo(`${llm.baseUrl}/`, "sk-org-key-123456") })
      yield* ask()
      expect(llm.requests.map((request) => request.path)).toEqual(["/v1/chat/completions", "/v1/chat/completions"])
      expect(llm.requests[0]!.headers.authorization).toBe("Bearer sk-org-key-123456")
      expect(llm.requests[1]!.headers.authorization).toBeUndefined()
    }).pipe(Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound)))))

  it.live("aborts the provider's request when the reply is interrupted (a barge-in, a client gone)", () =>
    Effect.gen(function*() {
      llm.reset()
      llm.enqueue(reply.content("one two three four five six seven eight", { chunkDelayMs: 100 }))
      const reading = yield* Effect.fork(ask())
      yield* Effect.sleep("150 millis")
      yield* Fiber.interrupt(reading)
      yield* abandonedByClient
    }).pipe(Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound)))))

  it.live("bounds the whole reply, not only its start: a reply still streaming at the bound fails as a timeout and is aborted", () =>
    Effect.gen(function*() {
      llm.reset()
      llm.enqueue(reply.content("one two three four five six seven eight nine ten", { chunkDelayMs: 300 }))
      const started = Date.now()
      const { result, pieces } = yield* ask({ timeoutSeconds: 1 })
      expect(Either.isLeft(result) && result.left).toMatchObject({ _tag: "LlmFailed", reason: "timeout" })
      expect(Date.now() - started).toBeLessThan(2500)
      expect(pieces.length).toBeGreaterThan(0)
      yield* abandonedByClient
    }).pipe(Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound)))))

  it.live("fails with a classified error, never the provider's text, when the provider refuses, breaks off, reports an error mid-reply or cannot be reached", () =>
    Effect.gen(function*() {
      llm.reset()
      llm.enqueue(reply.error(429), reply.breakOff("Half an answer"), reply.errorInStream("Almost"))
      const refused = yield* ask()
      expect(Either.isLeft(refused.result) && refused.result.left).toMatchObject({
        _tag: "LlmFailed",
        reason: "rejected",
        status: 429
      })
      const broken = yield* ask()
      expect(broken.pieces.join("")).toBe("Half an answer")
      expect(Either.isLeft(broken.result) && broken.result.left).toMatchObject({
        _tag: "LlmFailed",
        reason: "unreachable"
      })
      const failedMidReply = yield* ask()
      expect(failedMidReply.pieces.join("")).toBe("Almost")
      expect(Either.isLeft(failedMidReply.result) && failedMidReply.result.left).toMatchObject({
        _tag: "LlmFailed",
        reason: "rejected",
        status: null
      })
      const nobody = yield* ask({ connection: connectionTo("http://127.0.0.1:9/v1") })
      expect(Either.isLeft(nobody.result) && nobody.result.left).toMatchObject({
        _tag: "LlmFailed",
        reason: "unreachable"
      })
      for (const outcome of [refused, broken, failedMidReply]) {
        expect(JSON.stringify(outcome.result)).not.toContain("internal-detail")
      }
    }).pipe(Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound)))))

  it.live("sends again, once, a request whose kept-alive connection the provider closed as it was reused", () =>
    Effect.gen(function*() {
      const streamed = `data: ${
        JSON.stringify({ choices: [{ index: 0, delta: { content: "Fine." } }] })
      }\n\ndata: [DONE]\n\n`
      const requestsPerConnection = new Map<unknown, number>()
      const server = http.createServer((request, response) => {
        request.resume()
        const seen = (requestsPerConnection.get(request.socket) ?? 0) + 1
        requestsPerConnection.set(request.socket, seen)
        // The first connection's second request: the provider had just given up on it as idle.
        if (requestsPerConnection.size === 1 && seen === 2) return void request.socket.destroy()
        response.writeHead(200, { "content-type": "text/event-stream" })
        response.end(streamed)
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const connection = connectionTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`)
      const replies = yield* Effect.all([ask({ connection }), ask({ connection })]).pipe(
        Effect.ensuring(Effect.sync(() => server.close())),
        Effect.withConcurrency(1)
      )
      expect(replies.map(({ result }) => Either.getOrThrow(result).text)).toEqual(["Fine.", "Fine."])
      expect([...requestsPerConnection.values()]).toEqual([2, 1])
    }).pipe(Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound)))))

  it.live("takes a whole JSON answer from an endpoint that does not stream, and a JSON error in one as a refusal", () =>
    Effect.gen(function*() {
      const answers = [
        {
          id: "chatcmpl-whole",
          object: "chat.completion",
          created: 0,
          model: "m",
          choices: [{
            index: 0,
            finish_reason: "tool_calls",
            message: {
              role: "assistant",
              content: "Booking it.",
              tool_calls: [{ id: "c1", type: "function", function: { name: "book_visit", arguments: "{}" } }]
            }
          }],
          usage: { prompt_tokens: 12, completion_tokens: 4, total_tokens: 16 }
        },
        { error: { message: "scripted upstream failure: internal-detail-7f3a" } }
      ]
      const server = http.createServer((request, response) => {
        request.resume()
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify(answers.shift()))
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const connection = connectionTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`)
      const [whole, refusal] = yield* Effect.all([ask({ connection }), ask({ connection })]).pipe(
        Effect.ensuring(Effect.sync(() => server.close()))
      )
      expect(Either.getOrThrow(whole!.result)).toMatchObject({
        text: "Booking it.",
        toolCalls: [{ name: "book_visit", arguments: "{}" }],
        usage: { prompt_tokens: 12, completion_tokens: 4 }
      })
      expect(whole!.pieces).toEqual(["Booking it."])
      expect(Either.isLeft(refusal!.result) && refusal!.result.left).toMatchObject({
        _tag: "LlmFailed",
        reason: "rejected",
        status: null
      })
      expect(JSON.stringify(refusal!.result)).not.toContain("internal-detail")
    }).pipe(Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound)))))

  it.live("reads replies however the provider's bytes are split and whatever line endings it uses", () =>
    Effect.gen(function*() {
      // A provider writing one byte at a time with CRLF line endings, a comment and a multi-byte character.
      const events = [
        ": keep-alive",
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "Grüße, " } }] })}`,
        `data: ${JSON.stringify({ choices: [{ index: 0, delta: { content: "€5 off." } }] })}`,
        `data: ${JSON.stringify({ choices: [], usage: { prompt_tokens: 7, completion_tokens: 3 } })}`,
        "data: [DONE]"
      ]
      const bytes = Buffer.from(events.map((event) => `${event}\r\n\r\n`).join(""))
      const server = http.createServer((request, response) => {
        request.resume()
        response.writeHead(200, { "content-type": "text/event-stream" })
        let at = 0
        const next = () => (at < bytes.length
          ? response.write(bytes.subarray(at, ++at), () => setImmediate(next))
          : response.end())
        next()
      })
      yield* Effect.promise(() => new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve)))
      const { result } = yield* ask({
        connection: connectionTo(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`)
      }).pipe(
        Effect.ensuring(Effect.sync(() => server.close()))
      )
      expect(Either.getOrThrow(result)).toMatchObject({
        text: "Grüße, €5 off.",
        toolCalls: [],
        usage: { prompt_tokens: 7, completion_tokens: 3 }
      })
    }).pipe(Effect.provide(LlmChatLive.pipe(Layer.provide(LoopbackOutbound)))))
})
