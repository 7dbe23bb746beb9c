import type { EndReason } from "./endReason.ts"
import type { PlainMessage } from "./prompt.ts"
import { transcriptText, type TranscriptTurn } from "./transcript.ts"

export const dispositionSchema = (codes: ReadonlyArray<string>): Record<string, unknown> => ({
  type: "object",
  properties: {
    call_disposition: { type: "string", description: "The outcome of the conversation in a few words" },
    mapped_call_disposition: { type: "string", enum: [...codes], description: "The code that best fits the outcome" }
  },
  required: ["call_disposition", "mapped_call_disposition"],
  additionalProperties: false
})

export const dispositionMessages = (
  codes: ReadonlyArray<string>,
  endReason: EndReason,
  transcript: ReadonlyArray<TranscriptTurn>
): Array<PlainMessage> => [
  {
    role: "system",
    content: `Classify how this conversation ended. It ended because: ${endReason}. ` +
      `Describe the outcome in a few words, and choose exactly one of these codes: ${codes.join(", ")}.`
  },
  { role: "user", content: transcriptText(transcript) || "(no messages)" }
]

interface Disposition {
  readonly call_disposition: string
  readonly mapped_call_disposition: string
}

/**
 * The model's choice when it is one of the workflow's codes; otherwise (no codes, no answer, or a
 * code that is not in the list) the end reason, so the stored disposition is always a known value.
 */
export const acceptDisposition = (codes: ReadonlyArray<string>, endReason: EndReason, answer: unknown): Disposition => {
  const fields = answer !== null && typeof answer === "object" ? (answer as Record<string, unknown>) : {}
  const described = typeof fields["call_disposition"] === "string" && fields["call_disposition"].trim() !== ""
    ? fields["call_disposition"].trim()
    : endReason
  const chosen = fields["mapped_call_disposition"]
  const mapped = typeof chosen === "string" && codes.includes(chosen) ? chosen : endReason
  return { call_disposition: described, mapped_call_disposition: mapped }
}
