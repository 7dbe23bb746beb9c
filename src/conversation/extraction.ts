import type { ExtractionVariable, WorkflowNode } from "../graph/definition.ts"
import type { PlainMessage } from "./prompt.ts"
import { transcriptText, type TranscriptTurn } from "./transcript.ts"

/** The extraction settings of a node that has them switched on and names at least one variable. */
export const extractionAt = (
  node: WorkflowNode
): { prompt: string; variables: ReadonlyArray<ExtractionVariable> } | null => {
  if (node.type === "globalNode" || node.data.extraction_enabled !== true) return null
  const variables = node.data.extraction_variables ?? []
  return variables.length === 0 ? null : { prompt: node.data.extraction_prompt ?? "", variables }
}

/** A strict JSON schema: every variable present, `null` when the conversation did not say. */
export const extractionSchema = (variables: ReadonlyArray<ExtractionVariable>): Record<string, unknown> => ({
  type: "object",
  properties: Object.fromEntries(
    variables.map((variable) => [
      variable.name,
      { type: [variable.type, "null"], description: variable.prompt ?? variable.name }
    ])
  ),
  required: variables.map((variable) => variable.name),
  additionalProperties: false
})

export const extractionMessages = (
  prompt: string,
  variables: ReadonlyArray<ExtractionVariable>,
  transcript: ReadonlyArray<TranscriptTurn>
): Array<PlainMessage> => [
  {
    role: "system",
    content: [
      "Extract the following variables from the conversation below. Use null for anything the conversation does not state.",
      ...variables.map((variable) => `- ${variable.name} (${variable.type}): ${variable.prompt ?? ""}`),
      prompt.trim()
    ].filter((line) => line !== "").join("\n")
  },
  { role: "user", content: transcriptText(transcript) }
]

const coerce = (type: ExtractionVariable["type"], value: unknown): unknown => {
  if (value === null || value === undefined) return undefined
  if (type === "string") return typeof value === "string" ? value : String(value)
  if (type === "number") {
    const number = typeof value === "number" ? value : typeof value === "string" ? Number(value.trim()) : NaN
    return Number.isFinite(number) ? number : undefined
  }
  if (typeof value === "boolean") return value
  return value === "true" ? true : value === "false" ? false : undefined
}

/**
 * The model's answer reduced to the declared variables with their declared types; anything else
 * (extra keys, a non-number for a number) is dropped rather than stored wrongly.
 */
export const acceptExtracted = (
  variables: ReadonlyArray<ExtractionVariable>,
  answer: unknown
): Record<string, unknown> => {
  if (answer === null || typeof answer !== "object") return {}
  const values: Record<string, unknown> = {}
  for (const variable of variables) {
    const value = coerce(variable.type, (answer as Record<string, unknown>)[variable.name])
    if (value !== undefined) values[variable.name] = value
  }
  return values
}
