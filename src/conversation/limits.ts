/** Per-run bounds; a run that reaches one ends with the matching end reason. */
export interface ConversationLimits {
  /** User messages a run answers; the answer to the last one ends the run (`max_turns_reached`). */
  readonly maxTurns: number
  /** Seconds from start after which the run ends (`max_duration_exceeded`). */
  readonly maxDurationSeconds: number
  /** Seconds one model reply may take (`llm_timeout`). */
  readonly llmTimeoutSeconds: number
  /** Seconds without a message after which a chat ends (`idle_timeout`). */
  readonly idleTimeoutSeconds: number
}

interface LimitDefaults {
  readonly llmTimeoutSeconds: number
  readonly idleTimeoutSeconds: number
}

export const DEFAULT_MAX_TURNS = 100
export const DEFAULT_MAX_DURATION_SECONDS = 3600

const bounded = (value: unknown, min: number, max: number, fallback: number): number =>
  typeof value === "number" && Number.isFinite(value) ? Math.min(max, Math.max(min, Math.round(value))) : fallback

/**
 * Limits from a version's `workflow_configurations`: `max_turns`, `max_duration_seconds` (or the
 * established platform's `max_call_duration`), `llm_timeout_seconds` and
 * `text_chat_inactivity_timeout_seconds`; out-of-range values are clamped, missing ones defaulted.
 */
export const limitsFrom = (
  configurations: Readonly<Record<string, unknown>> | null,
  defaults: LimitDefaults
): ConversationLimits => {
  const config = configurations ?? {}
  return {
    maxTurns: bounded(config["max_turns"], 1, 10_000, DEFAULT_MAX_TURNS),
    maxDurationSeconds: bounded(
      config["max_duration_seconds"] ?? config["max_call_duration"],
      1,
      86_400,
      DEFAULT_MAX_DURATION_SECONDS
    ),
    llmTimeoutSeconds: bounded(
      config["llm_timeout_seconds"],
      1,
      defaults.llmTimeoutSeconds,
      defaults.llmTimeoutSeconds
    ),
    idleTimeoutSeconds: bounded(config["text_chat_inactivity_timeout_seconds"], 1, 86_400, defaults.idleTimeoutSeconds)
  }
}

/** True when the run has lasted its maximum duration by `nowMillis`. */
export const durationExceeded = (limits: ConversationLimits, startedAtMillis: number, nowMillis: number): boolean =>
  nowMillis - startedAtMillis >= limits.maxDurationSeconds * 1000
