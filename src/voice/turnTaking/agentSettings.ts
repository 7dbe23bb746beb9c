import { defaultTurnTakingSettings, ENDPOINTING_RANGE_MS, type TurnTakingSettings } from "./settings.ts"

/** What the agent says when it did not get the caller's words, or a provider failed: then the caller tries again. */
export const DEFAULT_FALLBACK_LINE = "Sorry, I didn't catch that. Could you say it again?"
/** What it says before it ends a call that keeps failing. */
export const DEFAULT_GOODBYE_LINE = "Sorry, we are having technical trouble. Please call again later. Goodbye."

const LINE_MAX_CHARS = 300

/** One call's turn-taking: the reducer's settings and the lines the agent falls back on. */
export interface CallTurnSettings {
  readonly turnTaking: TurnTakingSettings
  readonly fallbackLine: string
  readonly goodbyeLine: string
  /** The call's language (BCP 47), for backchannels. */
  readonly language: string
  /**
   * The model a failed answer is retried with (same provider and key as the agent's own model);
   * null: the retry asks the same model again.
   */
  readonly fallbackModel: string | null
}

/** A field of `workflow_configurations.turn_taking` that cannot be used, located under it. */
export interface TurnSettingProblem {
  readonly path: ReadonlyArray<string>
  readonly message: string
  readonly type: string
}

const NUMBERS = {
  endpointing_ms: { ...ENDPOINTING_RANGE_MS, integer: true },
  min_interrupt_ms: { min: 100, max: 2000, integer: true },
  min_interrupt_words: { min: 0, max: 10, integer: true },
  transcript_timeout_ms: { min: 1000, max: 10_000, integer: true }
} as const
const LINES = ["fallback_line", "goodbye_line"] as const
const MODEL_NAME_MAX_CHARS = 200

const isRecord = (value: unknown): value is Readonly<Record<string, unknown>> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/**
 * Every problem with an agent's `workflow_configurations.turn_taking` (absent is fine: the
 * defaults apply). Checked when the agent is saved and published, so a call never starts with
 * settings it would have to ignore.
 */
export const turnSettingProblems = (
  configurations: Readonly<Record<string, unknown>> | null | undefined
): ReadonlyArray<TurnSettingProblem> => {
  const value = configurations?.["turn_taking"]
  if (value === undefined || value === null) return []
  if (!isRecord(value)) {
    return [{ path: ["turn_taking"], message: "turn_taking must be an object", type: "object_type" }]
  }
  const problems: Array<TurnSettingProblem> = []
  for (const [key, range] of Object.entries(NUMBERS)) {
    const field = value[key]
    if (field === undefined) continue
    if (typeof field !== "number" || !Number.isInteger(field) || field < range.min || field > range.max) {
      problems.push({
        path: ["turn_taking", key],
        message: `${key} must be a whole number from ${range.min} to ${range.max}`,
        type: "number_range"
      })
    }
  }
  for (const key of LINES) {
    const field = value[key]
    if (field === undefined) continue
    if (typeof field !== "string" || field.trim() === "" || field.length > LINE_MAX_CHARS) {
      problems.push({
        path: ["turn_taking", key],
        message: `${key} must be a non-empty text of at most ${LINE_MAX_CHARS} characters`,
        type: "string_type"
      })
    }
  }
  const model = value["fallback_model"]
  if (
    model !== undefined &&
    (typeof model !== "string" || model.trim() === "" || model.length > MODEL_NAME_MAX_CHARS || /\s/.test(model))
  ) {
    problems.push({
      path: ["turn_taking", "fallback_model"],
      message: `fallback_model must be a model name (no spaces, at most ${MODEL_NAME_MAX_CHARS} characters)`,
      type: "string_type"
    })
  }
  const known = new Set<string>([...Object.keys(NUMBERS), ...LINES, "fallback_model"])
  for (const key of Object.keys(value)) {
    if (!known.has(key)) {
      problems.push({
        path: ["turn_taking", key],
        message: `${key} is not a turn-taking setting`,
        type: "extra_forbidden"
      })
    }
  }
  return problems
}

/** The call's settings from a validated agent configuration, the call's limits and its language. */
export const callTurnSettings = (
  configurations: Readonly<Record<string, unknown>> | null,
  limits: { readonly idleTimeoutMs: number; readonly maxDurationMs: number; readonly language: string | null }
): CallTurnSettings => {
  const given = configurations?.["turn_taking"]
  const value = isRecord(given) && turnSettingProblems(configurations).length === 0 ? given : {}
  const number = (key: keyof typeof NUMBERS, fallback: number) => typeof value[key] === "number" ? value[key] : fallback
  const line = (key: (typeof LINES)[number], fallback: string) =>
    typeof value[key] === "string" ? value[key].trim() : fallback
  const defaults = defaultTurnTakingSettings
  return {
    turnTaking: {
      ...defaults,
      endpointingMs: number("endpointing_ms", defaults.endpointingMs),
      minInterruptMs: number("min_interrupt_ms", defaults.minInterruptMs),
      minInterruptWords: number("min_interrupt_words", defaults.minInterruptWords),
      transcriptTimeoutMs: number("transcript_timeout_ms", defaults.transcriptTimeoutMs),
      idleTimeoutMs: limits.idleTimeoutMs,
      maxDurationMs: limits.maxDurationMs
    },
    fallbackLine: line("fallback_line", DEFAULT_FALLBACK_LINE),
    goodbyeLine: line("goodbye_line", DEFAULT_GOODBYE_LINE),
    language: limits.language ?? "en",
    fallbackModel: typeof value["fallback_model"] === "string" ? value["fallback_model"] : null
  }
}
