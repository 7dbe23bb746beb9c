import { Context, type Effect } from "effect"
import type { ChatMessage } from "../src/conversation/prompt.ts"
import type { ToolDefinition } from "../src/conversation/tools.ts"
import type { TokenUsage } from "../src/conversation/transcript.ts"
import type { LlmConnection, LlmFailed } from "./LlmGenerator.ts"

export interface ChatRequest {
  readonly connection: LlmConnection
  readonly messages: ReadonlyArray<ChatMessage>
  /** Functions the model may call; none means a plain text reply. */
  readonly tools: ReadonlyArray<ToolDefinition>
  /** Bound on the whole reply, from request to last token; `TALKGRAPH_LLM_TIMEOUT_SECONDS` when absent. */
  readonly timeoutSeconds?: number
}

export interface ChatToolCall {
  /** The provider's id for the call, which its result must name. */
  readonly id: string
  readonly name: string
  /** The arguments as the model wrote them (JSON text). */
  readonly arguments: string
}

/** A whole streamed reply: its text, the tools it called (in the model's order), the provider's usage. */
export interface ModelReply {
  readonly text: string
  readonly toolCalls: ReadonlyArray<ChatToolCall>
  readonly usage: TokenUsage
}

/**
 * Streaming chat completions with tools against an organization's OpenAI-compatible LLM.
 * `onText` receives the reply's text piece by piece as it arrives, each piece handled before the
 * next is read; the effect answers with the whole reply once it has ended. Interrupting it aborts
 * the request.
 */
export interface LlmChatShape {
  readonly reply: (
    request: ChatRequest,
    onText: (text: string) => Effect.Effect<void>
  ) => Effect.Effect<ModelReply, LlmFailed>
}

export class LlmChat extends Context.Tag("talkgraph/LlmChat")<LlmChat, LlmChatShape>() {}
