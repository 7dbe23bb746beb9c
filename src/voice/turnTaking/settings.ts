/**
 * How one call takes turns. Plain numbers so an agent (or one of its nodes) can set them and the
 * reducer can be driven by tests without a clock.
 */
export interface TurnTakingSettings {
  /** Silence after the caller's last word before a complete-sounding sentence is answered. */
  readonly endpointingMs: number
  /** Added after a sentence that sounds unfinished (a trailing "and", "so", "um", no final punctuation). */
  readonly incompleteExtraMs: number
  /** The wait after a short "yes"/"no" answering the agent's question. */
  readonly shortAnswerMs: number
  /** How long, after the caller stopped, a transcript may take before the agent asks them to repeat. */
  readonly transcriptTimeoutMs: number
  /** The caller's speech over the agent must last this long to interrupt it (a cough does not). */
  readonly minInterruptMs: number
  /** …and hold this many words that are not backchannels, when the transcription gives interim words. */
  readonly minInterruptWords: number
  /** A tentative pause that no words confirm within this long after the caller stopped resumes the agent. */
  readonly falseInterruptionMs: number
  readonly idleTimeoutMs: number
  readonly maxDurationMs: number
  /** Provider failures in a row after which the agent says goodbye and ends the call. */
  readonly maxProviderFailures: number
}

export const defaultTurnTakingSettings: TurnTakingSettings = {
  endpointingMs: 500,
  incompleteExtraMs: 700,
  shortAnswerMs: 250,
  transcriptTimeoutMs: 5000,
  minInterruptMs: 300,
  minInterruptWords: 2,
  falseInterruptionMs: 1500,
  idleTimeoutMs: 30_000,
  maxDurationMs: 3_600_000,
  maxProviderFailures: 3
}

/** The endpointing an agent may choose, in ms: shorter cuts callers off, longer feels sluggish. */
export const ENDPOINTING_RANGE_MS = { min: 300, max: 1500 } as const
