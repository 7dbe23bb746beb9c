import { ReviewTags, Sentiments } from "./qualityReview.ts"

/** What the reviewer is shown of a finished run. */
export interface ReviewedRun {
  readonly channel: string
  readonly durationSeconds: number
  readonly endReason: string | null
  readonly transcript: ReadonlyArray<{
    readonly role: string
    readonly text: string
    readonly start_ms?: number
    readonly end_ms?: number
  }>
}

const TAG_MEANINGS: Record<(typeof ReviewTags)[number], string> = {
  dead_air: "long silences where the caller waited for the agent or nobody spoke",
  caller_frustrated: "the caller showed annoyance, impatience or anger",
  agent_looping: "the agent repeated the same question or statement without progress",
  improper_reply: "the agent said something wrong, off-topic, rude or against its instructions",
  caller_detects_ai: "the caller noticed or asked whether they were talking to a machine"
}

/**
 * The default rubric: the reviewer grades the agent's side of the conversation. Written for this
 * project; Dograh's QA prompt was read only for what it is meant to catch.
 */
const DEFAULT_RUBRIC = [
  "You review finished conversations between an AI agent and a person for quality.",
  "Judge the agent's behaviour, not the person's. Answer with a JSON object:",
  "- score: a whole number from 1 (very poor) to 10 (excellent) for how well the agent handled the conversation;",
  `- tags: the issues you observed, a list drawn only from: ${
    ReviewTags.map((tag) => `${tag} (${TAG_MEANINGS[tag]})`).join("; ")
  }; an empty list when none applies;`,
  `- sentiment: the person's overall sentiment, one of ${Sentiments.join(", ")};`,
  "- summary: two or three sentences on what happened and how it ended."
].join("\n")

/** The JSON Schema the default rubric's answer is asked to follow (strict structured output). */
export const defaultReviewSchema: Record<string, unknown> = {
  type: "object",
  properties: {
    score: { type: "integer", minimum: 1, maximum: 10 },
    tags: { type: "array", items: { type: "string", enum: [...ReviewTags] } },
    sentiment: { type: "string", enum: [...Sentiments] },
    summary: { type: "string" }
  },
  required: ["score", "tags", "sentiment", "summary"],
  additionalProperties: false
}

const seconds = (ms: number | undefined) => (ms === undefined ? "" : `[${(ms / 1000).toFixed(1)}s] `)

/** The conversation as the reviewer reads it: timed lines on calls, so silences can be judged. */
export const conversationText = (run: ReviewedRun): string => {
  const lines = run.transcript.map((turn) =>
    `${seconds(turn.start_ms)}${turn.role === "user" ? "Person" : "Agent"}: ${turn.text}`
  )
  return [
    `Channel: ${run.channel === "chat" ? "text chat" : "call"}; duration: ${run.durationSeconds} s; ended: ${
      run.endReason ?? "unknown"
    }.`,
    "Conversation:",
    ...(lines.length === 0 ? ["(nothing was said)"] : lines)
  ].join("\n")
}

/** The messages of a review: the rubric (the default one or the user's prompt), then the conversation. */
export const reviewMessages = (
  rubric: "default" | { readonly prompt: string },
  run: ReviewedRun
): Array<{ role: "system" | "user"; content: string }> => [
  { role: "system", content: rubric === "default" ? DEFAULT_RUBRIC : rubric.prompt },
  { role: "user", content: conversationText(run) }
]
