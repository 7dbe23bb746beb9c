/** One line of a conversation as stored on the run and shown to users (docs/architecture.md, "Runs and conversations"). */
export interface TranscriptTurn {
  readonly role: "user" | "assistant"
  readonly text: string
  /** The graph node the conversation was at when this was said. */
  readonly node_id: string
  /** ISO-8601 time the turn was complete. */
  readonly at: string
  /** Voice: when the words began and ended, in ms since the call's audio started. */
  readonly start_ms?: number
  readonly end_ms?: number
  /** Voice, agent turns: from the caller's last word to the agent's first audio. */
  readonly latency_ms?: number
  /** Voice, agent turns: the caller spoke over the agent, so `text` is only what was played. */
  readonly interrupted?: boolean
  /** Voice, agent turns answering the caller: how the turn was taken. */
  readonly trace?: TurnTrace
}

/**
 * One voice turn's timeline, in ms since the call's audio began: the caller's end of speech, the
 * transcript settling, the end-of-turn decision (after `endpointing_ms` of silence), the model's
 * first words, the agent's first audio and, when the caller cut in, when the agent was stopped.
 */
export interface TurnTrace {
  readonly speech_end_ms: number
  readonly transcript_ms: number | null
  readonly turn_end_ms: number
  readonly endpointing_ms: number
  readonly first_token_ms: number | null
  readonly first_audio_ms: number | null
  readonly interrupted_at_ms?: number
}

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
  turns.map((turn) => `${turn.role === "user" ? "User" : "Agent"}: ${turn.text}`).join("\n")
