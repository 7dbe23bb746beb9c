import { Effect, Layer, Redacted } from "effect"
import type { ChatCompletionChunk } from "openai/resources/chat/completions"
import { type ChatRequest, type ChatToolCall, LlmChat, type ModelReply } from "../../services/LlmChat.ts"
import type { LlmFailed } from "../../services/LlmGenerator.ts"
import { noUsage, type TokenUsage } from "../../src/conversation/transcript.ts"
import { makeChatCompletionsStreams } from "./chatCompletionsStream.ts"
import { llmTimeoutSeconds } from "./llmTimeout.ts"
import { OPENAI_API } from "./openaiApi.ts"
import { classifyLlmFailure, logLlmFailure, timedOut as llmTimedOut } from "./providerFailure.ts"

/** Tool-call fragments arrive spread over chunks, keyed by index; they are whole only at the end. */
type PartialToolCalls = Map<number, { id: string; name: string; arguments: string }>

/** The text in a chunk; its tool-call fragments are gathered into `toolCalls`. */
const textOf = (chunk: ChatCompletionChunk, toolCalls: PartialToolCalls): string => {
  let text = ""
  for (const choice of chunk.choices ?? []) {
    text += choice.delta?.content ?? ""
    for (const call of choice.delta?.tool_calls ?? []) {
      const partial = toolCalls.get(call.index) ?? { id: "", name: "", arguments: "" }
      partial.id ||= call.id ?? ""
      partial.name += call.function?.name ?? ""
      partial.arguments += call.function?.arguments ?? ""
      toolCalls.set(call.index, partial)
    }
  }
  return text
}

const wholeToolCalls = (toolCalls: PartialToolCalls): Array<ChatToolCall> =>
  [...toolCalls.entries()].sort(([a], [b]) => a - b).map(([index, call]) => ({
    // A provider that names no id still gets its result paired with the call by this one.
    id: call.id || `call_${index}`,
    name: call.name,
    arguments: call.arguments
  }))

const usageOf = (usage: NonNullable<ChatCompletionChunk["usage"]>): TokenUsage => ({
  prompt_tokens: usage.prompt_tokens ?? 0,
  completion_tokens: usage.completion_tokens ?? 0
})

const messageBody = (message: ChatRequest["messages"][number]) => {
  if (message.role === "tool") return { role: "tool", tool_call_id: message.tool_call_id, content: message.content }
  if (message.role === "assistant" && message.tool_calls && message.tool_calls.length > 0) {
    return {
      role: "assistant",
      content: message.content === "" ? null : message.content,
      tool_calls: message.tool_calls.map((call) => ({
        id: call.id,
        type: "function",
        function: { name: call.name, arguments: call.arguments }
      }))
    }
  }
  return { role: message.role, content: message.content }
}

const NO_PARAMETERS = { type: "object", properties: {} }

const requestBody = (request: ChatRequest) => ({
  model: request.connection.model,
  messages: request.messages.map(messageBody),
  ...(request.connection.temperature !== undefined ? { temperature: request.connection.temperature } : {}),
  stream: true,
  stream_options: { include_usage: true },
  ...(request.tools.length > 0
    ? {
      tools: request.tools.map((tool) => ({
        type: "function",
        function: { name: tool.name, description: tool.description, parameters: tool.parameters ?? NO_PARAMETERS }
      }))
    }
    : {})
})

/**
 * Streaming chat completions against any OpenAI-compatible endpoint (its base URL). The whole
 * reply is bounded by one timer that aborts the request; interrupting the reply aborts it too.
 * One attempt: retrying is the caller's decision.
 *
 * The chunks are read one promise at a time in the calling fiber: wrapping them in an Effect
 * `Stream` (a queue, a forked producer, a channel per pull) and bounding it with `Effect.timeout`
 * (two more fibers) cost more CPU per reply than the HTTP exchange itself (bench/chatTurnOverhead.ts).
 */
export const LlmChatLive = Layer.scoped(
  LlmChat,
  Effect.gen(function*() {
    const defaultTimeoutSeconds = yield* llmTimeoutSeconds
    const streams = yield* makeChatCompletionsStreams

    const reply = (
      request: ChatRequest,
      onText: (text: string) => Effect.Effect<void>
    ): Effect.Effect<ModelReply, LlmFailed> =>
      Effect.suspend(() => {
        const timeoutSeconds = request.timeoutSeconds ?? defaultTimeoutSeconds
        const controller = new AbortController()
        let timedOut = false
        // Aborting a finished request would still build an exception and run the request's listeners.
        let finished = false
        const timer = setTimeout(() => {
          timedOut = true
          controller.abort()
        }, timeoutSeconds * 1000)
        const { connection } = request
        const chunks = streams.open({
          baseUrl: connection.baseUrl ?? OPENAI_API,
          apiKey: connection.apiKey ? Redacted.value(connection.apiKey) : null,
          body: requestBody(request),
          signal: controller.signal
        })

        const read = Effect.gen(function*() {
          const toolCalls: PartialToolCalls = new Map()
          let text = ""
          let usage = noUsage
          for (;;) {
            const chunk = yield* Effect.tryPromise({ try: () => chunks.next(), catch: (error) => error })
            if (chunk === undefined) break
            const piece = textOf(chunk, toolCalls)
            if (chunk.usage) usage = usageOf(chunk.usage)
            if (piece) {
              text += piece
              yield* onText(piece)
            }
          }
          finished = true
          return { text, toolCalls: wholeToolCalls(toolCalls), usage } satisfies ModelReply
        })

        return read.pipe(
          Effect.catchAll((error) => {
            const failure = timedOut ? llmTimedOut(timeoutSeconds) : classifyLlmFailure(error)
            return logLlmFailure("LLM chat request failed", connection, timedOut ? failure.message : error).pipe(
              Effect.zipRight(Effect.fail(failure))
            )
          }),
          Effect.ensuring(Effect.sync(() => {
            clearTimeout(timer)
            if (!finished) controller.abort()
          })),
          Effect.withSpan("LlmChat.reply", { attributes: { "llm.model": connection.model } })
        )
      })

    return LlmChat.of({ reply })
  })
)
