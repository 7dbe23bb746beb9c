import { createHash } from "node:crypto"

/**
 * The per-agent quality review setting (`workflow_configurations.quality_review`), the sampling
 * rule that picks which finished runs are reviewed, and the strict reading of a reviewer's answer.
 * The shape follows Dograh's `qa` node (enabled, minimum call duration, voicemail calls, sample
 * rate, system prompt) as one agent setting.
 */

/** The issue tags the default rubric may give; anything else in an answer makes the review fail. */
export const ReviewTags = [
  "dead_air",
  "caller_frustrated",
  "agent_looping",
  "improper_reply",
  "caller_detects_ai"
] as const
export type ReviewTag = (typeof ReviewTags)[number]

export const Sentiments = ["positive", "neutral", "negative"] as const
export type Sentiment = (typeof Sentiments)[number]

export interface QualityReviewSetting {
  readonly enabled: boolean
  /** `"default"`, or the user's own prompt, which must make the model answer with a JSON object. */
  readonly rubric: "default" | { readonly prompt: string }
  readonly minDurationSeconds: number
  /** Percent of eligible runs reviewed, 0–100. */
  readonly sampleRate: number
  readonly includeVoicemail: boolean
  /** The model asked on the organization's LLM connection; null: the agent's own (its `llm_model` override or the organization's). */
  readonly model: string | null
}

type Problem = { path: Array<string | number>; message: string; type: string }

const SETTING = "quality_review"
const PROMPT_MAX = 20_000
const KNOWN_KEYS = ["enabled", "rubric", "min_duration_seconds", "sample_rate", "include_voicemail", "model"]

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Why `quality_review` cannot be used as written; none when it can (or is absent). */
export const qualityReviewProblems = (
  configurations: Readonly<Record<string, unknown>> | null | undefined
): Array<Problem> => {
  const raw = configurations?.[SETTING]
  if (raw === undefined || raw === null) return []
  if (!isObject(raw)) return [{ path: [SETTING], message: "must be an object", type: "type_error" }]
  const problems: Array<Problem> = []
  const at = (key: string, message: string, type = "value_error") =>
    problems.push({ path: [SETTING, key], message, type })
  for (const key of Object.keys(raw)) {
    if (!KNOWN_KEYS.includes(key)) {
      at(key, `is not a quality review setting (known: ${KNOWN_KEYS.join(", ")})`, "extra_forbidden")
    }
  }
  if (raw["enabled"] !== undefined && typeof raw["enabled"] !== "boolean") at("enabled", "must be true or false")
  const rubric = raw["rubric"]
  if (rubric !== undefined && rubric !== "default") {
    const prompt = isObject(rubric) ? rubric["prompt"] : undefined
    if (typeof prompt !== "string" || prompt.trim() === "") {
      at("rubric", "must be \"default\" or { \"prompt\": \"…\" } with a prompt that asks for a JSON object")
    } else if (prompt.length > PROMPT_MAX) {
      at("rubric", `the prompt must be at most ${PROMPT_MAX} characters`)
    } else if (!/json/i.test(prompt)) {
      at("rubric", "the prompt must ask the model to answer with a JSON object (mention JSON)")
    }
  }
  const minimum = raw["min_duration_seconds"]
  if (minimum !== undefined && (typeof minimum !== "number" || !Number.isFinite(minimum) || minimum < 0)) {
    at("min_duration_seconds", "must be a number of seconds, 0 or more")
  }
  const rate = raw["sample_rate"]
  if (rate !== undefined && (typeof rate !== "number" || !Number.isFinite(rate) || rate < 0 || rate > 100)) {
    at("sample_rate", "must be a percentage from 0 to 100")
  }
  if (raw["include_voicemail"] !== undefined && typeof raw["include_voicemail"] !== "boolean") {
    at("include_voicemail", "must be true or false")
  }
  const model = raw["model"]
  if (
    model !== undefined && model !== null && (typeof model !== "string" || model.trim() === "" || model.length > 200)
  ) {
    at(
      "model",
      "must be a model name (1 to 200 characters) on the organization's LLM connection, or null for the agent's own"
    )
  }
  return problems
}

/** The setting with its defaults filled in; null when absent or turned off. Call only on a valid setting. */
export const qualityReviewOf = (
  configurations: Readonly<Record<string, unknown>> | null | undefined
): QualityReviewSetting | null => {
  const raw = configurations?.[SETTING]
  if (!isObject(raw) || raw["enabled"] !== true) return null
  const rubric = raw["rubric"]
  return {
    enabled: true,
    rubric: isObject(rubric) && typeof rubric["prompt"] === "string" ? { prompt: rubric["prompt"] } : "default",
    minDurationSeconds: typeof raw["min_duration_seconds"] === "number" ? raw["min_duration_seconds"] : 0,
    sampleRate: typeof raw["sample_rate"] === "number" ? raw["sample_rate"] : 100,
    includeVoicemail: raw["include_voicemail"] === true,
    model: typeof raw["model"] === "string" ? raw["model"].trim() : null
  }
}

/**
 * The run's place in 0–10000 (a hash of its id), so whether a run is sampled never depends on
 * timing or on which process reviews it, and a test can say in advance which runs are picked.
 */
export const samplePoint = (runId: number | string): number =>
  createHash("sha256").update(`quality-review:${runId}`).digest().readUInt32BE(0) % 10_000

export type ReviewDecision =
  | { readonly review: true }
  | { readonly review: false; readonly reason: "disabled" | "too_short" | "voicemail" | "not_sampled" }

/** Whether a finished run is reviewed under the setting. */
export const reviewDecision = (
  setting: QualityReviewSetting | null,
  run: { readonly id: number | string; readonly durationSeconds: number; readonly voicemail: boolean }
): ReviewDecision => {
  if (setting === null) return { review: false, reason: "disabled" }
  if (run.durationSeconds < setting.minDurationSeconds) return { review: false, reason: "too_short" }
  if (run.voicemail && !setting.includeVoicemail) return { review: false, reason: "voicemail" }
  return samplePoint(run.id) < Math.round(setting.sampleRate * 100)
    ? { review: true }
    : { review: false, reason: "not_sampled" }
}

export interface DefaultReview {
  readonly score: number
  readonly tags: ReadonlyArray<ReviewTag>
  readonly sentiment: Sentiment
  readonly summary: string
}

export type ParsedReview =
  | { readonly ok: true; readonly result: Record<string, unknown> }
  | { readonly ok: false; readonly reason: string }

/** The JSON object in a model's answer, allowing the ```json fences models like to add. */
const answerObject = (text: string): Record<string, unknown> | string => {
  const fenced = /^\s*```(?:json)?\s*([\s\S]*?)\s*```\s*$/i.exec(text)
  const body = fenced ? fenced[1]! : text.trim()
  let value: unknown
  try {
    value = JSON.parse(body)
  } catch {
    return "the answer is not JSON"
  }
  return isObject(value) ? value : "the answer is not a JSON object"
}

/** A custom rubric's answer: any JSON object, kept as it is. */
export const parseCustomReview = (text: string): ParsedReview => {
  const value = answerObject(text)
  return typeof value === "string" ? { ok: false, reason: value } : { ok: true, result: value }
}

/** A default rubric's answer, read strictly: every field present and in range, no unknown tag. */
export const parseDefaultReview = (text: string): ParsedReview => {
  const value = answerObject(text)
  if (typeof value === "string") return { ok: false, reason: value }
  const { score, tags, sentiment, summary } = value
  if (typeof score !== "number" || !Number.isInteger(score) || score < 1 || score > 10) {
    return { ok: false, reason: "\"score\" must be a whole number from 1 to 10" }
  }
  if (!Array.isArray(tags) || tags.some((tag) => !(ReviewTags as ReadonlyArray<unknown>).includes(tag))) {
    return { ok: false, reason: `"tags" must be a list of: ${ReviewTags.join(", ")}` }
  }
  if (!(Sentiments as ReadonlyArray<unknown>).includes(sentiment)) {
    return { ok: false, reason: `"sentiment" must be one of: ${Sentiments.join(", ")}` }
  }
  if (typeof summary !== "string" || summary.trim() === "") {
    return { ok: false, reason: "\"summary\" must be a non-empty string" }
  }
  const review: DefaultReview = {
    score,
    tags: [...new Set(tags as ReadonlyArray<ReviewTag>)],
    sentiment: sentiment as Sentiment,
    summary: summary.trim()
  }
  return { ok: true, result: { ...review } }
}
