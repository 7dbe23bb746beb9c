import type { TranscriptTurn } from "../conversation/transcript.ts"
import { transcriptText } from "../conversation/transcript.ts"

/** A message of a one-shot (structured) request, as the LLM generator takes it. */
export interface PromptMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
}

/** The structured answer the simulated caller gives each turn. */
export const callerSchemaName = "simulated_caller_turn"
export const callerJsonSchema = {
  type: "object",
  properties: {
    message: { type: "string", description: "What you say next, as the caller" },
    hang_up: { type: "boolean", description: "true once you would end the conversation (after saying message)" }
  },
  required: ["message", "hang_up"],
  additionalProperties: false
}

export interface CallerTurn {
  readonly message: string
  readonly hangUp: boolean
}

/** The caller's answer, or null when the model did not follow the schema. */
export const callerTurnOf = (value: unknown): CallerTurn | null => {
  if (typeof value !== "object" || value === null) return null
  const { hang_up, message } = value as Record<string, unknown>
  if (typeof message !== "string" || typeof hang_up !== "boolean") return null
  return { message: message.trim(), hangUp: hang_up }
}

/**
 * The simulated caller's view of the conversation: the persona as instructions, the agent's words
 * as what it hears (user) and its own earlier words as its replies (assistant).
 */
export const callerMessages = (
  persona: string,
  variables: Readonly<Record<string, unknown>>,
  transcript: ReadonlyArray<Pick<TranscriptTurn, "role" | "text">>
): ReadonlyArray<PromptMessage> => [
  {
    role: "system",
    content: [
      "You are role-playing a caller talking to an AI agent, to test the agent. Stay in character;",
      "never say you are an AI or that this is a test. Say one short turn at a time, as a person on a call would.",
      "Set hang_up to true when you would end the call.",
      "",
      "# Who you are and how you behave",
      persona,
      ...(Object.keys(variables).length > 0
        ? ["", "# What the agent's records say about you", JSON.stringify(variables)]
        : [])
    ].join("\n")
  },
  ...transcript.filter((turn) => turn.text.trim() !== "").map((turn): PromptMessage => ({
    role: turn.role === "assistant" ? "user" : "assistant",
    content: turn.text
  }))
]

export const judgeSchemaName = "agent_test_judgement"
export const judgeJsonSchema = {
  type: "object",
  properties: {
    results: {
      type: "array",
      items: {
        type: "object",
        properties: {
          criterion: { type: "integer", description: "The criterion's number" },
          passed: { type: "boolean" },
          reason: { type: "string", description: "One sentence: why it passed or failed" }
        },
        required: ["criterion", "passed", "reason"],
        additionalProperties: false
      }
    }
  },
  required: ["results"],
  additionalProperties: false
}

/** The judge grades every criterion of a conversation in one request. */
export const judgeMessages = (
  criteria: ReadonlyArray<string>,
  transcript: ReadonlyArray<TranscriptTurn>
): ReadonlyArray<PromptMessage> => [
  {
    role: "system",
    content: [
      "You grade a conversation between an AI agent and a caller against numbered criteria.",
      "Judge only from the transcript. For every criterion answer whether the agent met it, with a one-sentence reason."
    ].join("\n")
  },
  {
    role: "user",
    content: [
      "# Transcript",
      transcriptText(transcript),
      "",
      "# Criteria",
      ...criteria.map((criterion, index) => `${index + 1}. ${criterion}`)
    ].join("\n")
  }
]

export interface Verdict {
  readonly criterion: string
  readonly passed: boolean
  readonly reason: string
}

/**
 * The judge's verdict on each criterion. A criterion the judge did not answer fails: a missing
 * grade must not pass a suite.
 */
export const verdictsOf = (criteria: ReadonlyArray<string>, value: unknown): ReadonlyArray<Verdict> => {
  const results = typeof value === "object" && value !== null && Array.isArray((value as any).results)
    ? (value as { results: Array<unknown> }).results
    : []
  return criteria.map((criterion, index) => {
    const found = results.find((result): result is { criterion: number; passed: boolean; reason: unknown } =>
      typeof result === "object" && result !== null && (result as any).criterion === index + 1 &&
      typeof (result as any).passed === "boolean"
    )
    return found
      ? { criterion, passed: found.passed, reason: typeof found.reason === "string" ? found.reason : "" }
      : { criterion, passed: false, reason: "The judge gave no verdict on this criterion" }
  })
}
