import { Context, type Stream } from "effect"
import type { ChatMessage } from "../src/conversation/prompt.ts"
import type { ToolDefinition } from "../src/conversation/tools.ts"
import type { LlmConnection, LlmFailed } from "./LlmGenerator.ts"

export interface ChatRequest {
  readonly connection: LlmConnection
  readonly messages: ReadonlyArray<ChatMessage>
  /** Functions the model may call; none means a plain text reply. */
  readonly tools: ReadonlyArray<ToolDefinition>
}

/** What a streaming reply yields, in order: text as it arrives, then complete tool calls, then usage. */
export type ChatChunk =
  | { readonly _tag: "Text"; readonly text: string }
  | { readonly _tag: "ToolCall"; readonly name: string; readonly arguments: string }
  | { readonly _tag: "Usage"; readonly prompt_tokens: number; readonly completion_tokens: number }

/**
 * Streaming chat completions with tools against an organization's OpenAI-compatible LLM.
 * Interrupting the stream aborts the request. Each request is bounded by
 * `TALKGRAPH_LLM_TIMEOUT_SECONDS`; callers may bound it tighter.
 */
export interface LlmChatShape {
  readonly stream: (request: ChatRequest) => Stream.Stream<ChatChunk, LlmFailed>
}

export class LlmChat extends Context.Tag("talkgraph/LlmChat")<LlmChat, LlmChatShape>() {}
