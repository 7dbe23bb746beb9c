import { Schema } from "effect"
import { TimestampText } from "../domain/wireTypes.ts"

/**
 * One voice turn's timeline, in ms since the call's audio began: the caller's end of speech, the
 * transcript settling, the end-of-turn decision (after `endpointing_ms` of silence), the model's
 * first words, the agent's first audio and, when the caller cut in, when the agent was stopped.
 */
export const TurnTrace = Schema.Struct({
  speech_end_ms: Schema.Number,
  transcript_ms: Schema.NullOr(Schema.Number),
  turn_end_ms: Schema.Number,
  endpointing_ms: Schema.Number,
  first_token_ms: Schema.NullOr(Schema.Number),
  first_audio_ms: Schema.NullOr(Schema.Number),
  interrupted_at_ms: Schema.optionalWith(Schema.Number, { exact: true }),
  /**
   * Time spent in knowledge-base searches before the reply: automatic ones (`knowledge_retrieval:
   * "auto"`) and search_knowledge_base calls, whose searches of one round overlap.
   */
  retrieval_ms: Schema.optionalWith(Schema.Number, { exact: true })
}).annotations({ identifier: "TurnTrace" })
export type TurnTrace = typeof TurnTrace.Type

/** A passage given to the model, as a reviewer sees where it came from. */
export const KnowledgeSource = Schema.Struct({
  document_uuid: Schema.String,
  filename: Schema.String,
  page: Schema.NullOr(Schema.Int),
  heading: Schema.NullOr(Schema.String),
  chunk_index: Schema.Int,
  similarity: Schema.Number
}).annotations({ identifier: "KnowledgeSource" })

/**
 * A library tool the model called in a turn: what it asked, how it went, and what it was told
 * (at most the tool's result limit, with a note when cut). `id` pairs the call with its result
 * when the conversation is given to the model again.
 */
export const ToolCall = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  tool_uuid: Schema.String,
  /** The arguments as the model wrote them (JSON text). */
  arguments: Schema.String,
  status: Schema.Literal("success", "error"),
  latency_ms: Schema.Number,
  result: Schema.String,
  truncated: Schema.Boolean,
  /** search_knowledge_base: the passages the model was given, with their document and page. */
  sources: Schema.optionalWith(Schema.Array(KnowledgeSource), { exact: true })
}).annotations({ identifier: "ToolCall" })
export type ToolCall = typeof ToolCall.Type

/**
 * A knowledge-base search made with the caller's words before the model answered (a node with
 * `knowledge_retrieval: "auto"`), and the passages the model was given. `retrieval` says how they
 * were ranked: `full_text` also when the embeddings endpoint was too slow for the turn; `status`
 * `timeout` (no passages) when even full text did not answer in time.
 */
export const KnowledgeRetrieval = Schema.Struct({
  query: Schema.String,
  status: Schema.Literal("success", "error", "timeout"),
  retrieval: Schema.NullOr(Schema.Literal("hybrid", "full_text")),
  latency_ms: Schema.Number,
  sources: Schema.Array(KnowledgeSource)
}).annotations({ identifier: "KnowledgeRetrieval" })
export type KnowledgeRetrieval = typeof KnowledgeRetrieval.Type

/**
 * One line of a conversation as stored on the run and shown to users (docs/architecture.md, "Runs
 * and conversations"); the API's TranscriptTurn is this schema.
 */
export const TranscriptTurn = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  text: Schema.String,
  /** The graph node the conversation was at when this was said. */
  node_id: Schema.String,
  /** ISO-8601 time the turn was complete. */
  at: TimestampText,
  /** Voice: when the words began and ended, in ms since the call's audio started. */
  start_ms: Schema.optionalWith(Schema.Number, { exact: true }),
  end_ms: Schema.optionalWith(Schema.Number, { exact: true }),
  /** Voice, agent turns: from the caller's last word to the agent's first audio. */
  latency_ms: Schema.optionalWith(Schema.Number, { exact: true }),
  /** Voice, caller turns: the caller pressed these keys (`text` says so for the model). */
  keypad: Schema.optionalWith(Schema.String, { exact: true }),
  /** Voice, agent turns: the caller spoke over the agent, so `text` is only what was played. */
  interrupted: Schema.optionalWith(Schema.Boolean, { exact: true }),
  /** Voice, agent turns answering the caller: how the turn was taken. */
  trace: Schema.optionalWith(TurnTrace, { exact: true }),
  /** Agent turns: the library tools the model called after saying `text` (which may be empty). */
  tool_calls: Schema.optionalWith(Schema.Array(ToolCall), { exact: true }),
  /** Caller turns at a node with `knowledge_retrieval: "auto"`: the searches made with `text` before the model answered. */
  retrievals: Schema.optionalWith(Schema.Array(KnowledgeRetrieval), { exact: true })
}).annotations({ identifier: "TranscriptTurn" })
export type TranscriptTurn = typeof TranscriptTurn.Type

export interface TokenUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
}

export const noUsage: TokenUsage = { prompt_tokens: 0, completion_tokens: 0 }

export const addUsage = (a: TokenUsage, b: TokenUsage): TokenUsage => ({
  prompt_tokens: a.prompt_tokens + b.prompt_tokens,
  completion_tokens: a.completion_tokens + b.completion_tokens
})

/** A run's `service_tokens`: every LLM token it consumed, prompt and completion alike. */
export const serviceTokens = (usage: TokenUsage): number => usage.prompt_tokens + usage.completion_tokens

/** The transcript as plain lines, for the extraction and disposition prompts. */
export const transcriptText = (turns: ReadonlyArray<TranscriptTurn>): string =>
  turns.filter((turn) => turn.text !== "").map((turn) => `${turn.role === "user" ? "User" : "Agent"}: ${turn.text}`)
    .join("\n")
