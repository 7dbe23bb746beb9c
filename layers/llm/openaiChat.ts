import { Effect, Layer, Runtime, Stream } from "effect"
import type { ChatCompletionChunk } from "openai/resources/chat/completions"
import { type ChatChunk, LlmChat, type ChatRequest } from "../../services/LlmChat.ts"
import type { LlmFailed } from "../../services/LlmGenerator.ts"
import { llmTimeoutSeconds } from "./llmTimeout.ts"
import { makeOpenAiClients } from "./openaiClients.ts"
import { classifyLlmFailure, logLlmFailure } from "./providerFailure.ts"

/** Tool-call fragments arrive spread over chunks, keyed by index; they are whole only at the end. */
interface PartialToolCall {
  name: string
  arguments: string
}

/** The text in a chunk; tool-call fragments are gathered into `toolCalls`. */
const textOf = (chunk: ChatCompletionChunk, toolCalls: Map<number, PartialToolCall>): Array<ChatChunk> => {
  const out: Array<ChatChunk> = []
  for (const choice of chunk.choices ?? []) {
    const text = choice.delta?.content
    if (text) out.push({ _tag: "Text", text })
    for (const call of choice.delta?.tool_calls ?? []) {
      const partial = toolCalls.get(call.index) ?? { name: "", arguments: "" }
      partial.name += call.function?.name ?? ""
      partial.arguments += call.function?.arguments ?? ""
      toolCalls.set(call.index, partial)
    }
  }
  return out
}

/** What follows the text: the tool calls, whole, then the usage the provider reported. */
const endOf = (toolCalls: Map<number, PartialToolCall>, usage: ChatCompletionChunk["usage"]): Array<ChatChunk> => [
  ...[...toolCalls.entries()].sort(([a], [b]) => a - b).map(([, call]): ChatChunk => ({ _tag: "ToolCall", name: call.name, arguments: call.arguments })),
  ...(usage ? [{ _tag: "Usage" as const, prompt_tokens: usage.prompt_tokens ?? 0, completion_tokens: usage.completion_tokens ?? 0 }] : [])
]

/**
 * Streaming chat completions on the `openai` client (any OpenAI-compatible endpoint via its base
 * URL). The client's retries are off; the client bounds the wait for an answer, the conversation
 * engine the whole reply (the run's LLM timeout), and interrupting the stream aborts the request.
 */
export const LlmChatLive = Layer.effect(
  LlmChat,
  Effect.gen(function* () {
    const timeoutSeconds = yield* llmTimeoutSeconds
    const clientFor = makeOpenAiClients(timeoutSeconds)

    const requestBody = (request: ChatRequest) => ({
      model: request.connection.model,
      messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
      stream: true as const,
      stream_options: { include_usage: true },
      ...(request.tools.length > 0
        ? {
          tools: request.tools.map((tool) => ({
            type: "function" as const,
            function: { name: tool.name, description: tool.description, parameters: { type: "object", properties: {} } }
          }))
        }
        : {})
    })

    /**
     * The SDK's chunks are pushed into the stream as they are read: one stream stage, where a
     * pipeline of stream operators cost more CPU per reply than the SDK itself
     * (bench/chatTurnOverhead.ts). Aborted only when the reply is not read to its end (the stream
     * was interrupted or failed): aborting a finished request still builds an exception and runs
     * the client's listeners.
     */
    const stream = (request: ChatRequest): Stream.Stream<ChatChunk, LlmFailed> =>
      Stream.asyncPush<ChatChunk, LlmFailed>((emit) =>
        Effect.gen(function* () {
          const runtime = yield* Effect.runtime<never>()
          let finished = false
          const controller = yield* Effect.acquireRelease(
            Effect.sync(() => new AbortController()),
            (controller) => (finished ? Effect.void : Effect.sync(() => controller.abort()))
          )
          const failed = (error: unknown) => {
            finished = true
            Runtime.runFork(runtime)(logLlmFailure("LLM chat request failed", request.connection, error))
            emit.fail(classifyLlmFailure(error, timeoutSeconds))
          }
          const read = async () => {
            const completion = await clientFor(request.connection).chat.completions.create(requestBody(request), { signal: controller.signal })
            const toolCalls = new Map<number, PartialToolCall>()
            let usage: ChatCompletionChunk["usage"]
            for await (const chunk of completion) {
              const text = textOf(chunk, toolCalls)
              if (text.length > 0) emit.array(text)
              usage = chunk.usage ?? usage
            }
            finished = true
            const end = endOf(toolCalls, usage)
            if (end.length > 0) emit.array(end)
            emit.end()
          }
          read().catch((error) => (controller.signal.aborted ? undefined : failed(error)))
        }), { bufferSize: "unbounded" }).pipe(Stream.withSpan("LlmChat.stream", { attributes: { "llm.model": request.connection.model } }))

    return LlmChat.of({ stream })
  })
)
