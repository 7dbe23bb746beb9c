import { Context, type Effect, type Redacted, Schema } from "effect"

/** How to reach an organization's LLM: any OpenAI-compatible endpoint (`provider: "openai"` + base URL). */
export interface LlmConnection {
  readonly provider: "openai"
  readonly model: string
  readonly apiKey: Redacted.Redacted<string> | null
  /** `null` means the OpenAI API itself. */
  readonly baseUrl: string | null
  /** The agent's sampling temperature; the provider's default when absent. */
  readonly temperature?: number | undefined
}

export interface LlmMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

export interface StructuredRequest {
  readonly connection: LlmConnection
  readonly messages: ReadonlyArray<LlmMessage>
  /** Name and JSON Schema of the answer, sent as `response_format: json_schema` (strict). */
  readonly schemaName: string
  readonly jsonSchema: Record<string, unknown>
}

export interface LlmUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
}

export interface StructuredReply {
  /** The answer's text as the model wrote it (to show it back to the model when correcting). */
  readonly text: string
  /** The answer parsed as JSON, or `undefined` when the text (possibly empty) is not JSON. */
  readonly value: unknown
  readonly usage: LlmUsage
}

/**
 * The LLM could not give an answer. `reason` is for the caller to phrase its own message; the
 * provider's error text is logged, never passed on.
 */
export class LlmFailed extends Schema.TaggedError<LlmFailed>()("LlmFailed", {
  reason: Schema.Literal("unreachable", "timeout", "rejected"),
  status: Schema.NullOr(Schema.Number),
  message: Schema.String
}) {}

/** One-shot generation against an organization's LLM, bounded by `TALKGRAPH_LLM_TIMEOUT_SECONDS`. */
export interface LlmGeneratorShape {
  readonly generateStructured: (request: StructuredRequest) => Effect.Effect<StructuredReply, LlmFailed>
  /** The configured bound on one LLM request, in seconds. */
  readonly timeoutSeconds: number
}

export class LlmGenerator extends Context.Tag("talkgraph/LlmGenerator")<LlmGenerator, LlmGeneratorShape>() {}
