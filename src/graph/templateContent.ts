import { Schema } from "effect"
import { ExtractionVariable } from "./definition.ts"

/**
 * What the organization's LLM writes for a template request: the agent's content only. The graph
 * around it is ours (`starterGraph.ts`), so a model cannot produce a structurally broken workflow.
 * Transitions name steps by `key`; `"start"` and `"end"` are the fixed first and last nodes.
 */
const Text = (max: number) =>
  Schema.String.pipe(
    Schema.filter((text) => text.trim().length > 0, { message: () => "must not be empty" }),
    Schema.maxLength(max)
  )

export const TemplateStep = Schema.Struct({
  key: Schema.String.pipe(
    Schema.pattern(/^[a-z][a-z0-9_]{0,39}$/, { message: () => "must be lower_snake_case, at most 40 characters" })
  ),
  name: Text(100),
  prompt: Text(8000)
})

export const TemplateTransition = Schema.Struct({
  from: Schema.String,
  to: Schema.String,
  label: Text(60),
  condition: Text(1000)
})

export const TemplateContent = Schema.Struct({
  name: Text(100),
  greeting: Text(1000),
  global_prompt: Text(8000),
  opening_prompt: Text(8000),
  steps: Schema.Array(TemplateStep).pipe(Schema.minItems(1), Schema.maxItems(8)),
  transitions: Schema.Array(TemplateTransition).pipe(Schema.minItems(2), Schema.maxItems(40)),
  closing_prompt: Text(8000),
  extraction_variables: Schema.Array(ExtractionVariable).pipe(Schema.maxItems(20)),
  disposition_codes: Schema.Array(Schema.String.pipe(Schema.pattern(/^[A-Za-z0-9_-]{1,64}$/, {
    message: () => "must be 1-64 letters, digits, _ or -"
  }))).pipe(Schema.minItems(1), Schema.maxItems(20))
})
export type TemplateContent = typeof TemplateContent.Type

const string = { type: "string" }
const object = (properties: Record<string, unknown>) => ({
  type: "object",
  properties,
  required: Object.keys(properties),
  additionalProperties: false
})

/**
 * The same shape as JSON Schema for `response_format: json_schema` in strict mode (every property
 * required, no extra properties). Limits strict mode cannot express are checked after decoding.
 */
export const templateContentJsonSchema = object({
  name: string,
  greeting: string,
  global_prompt: string,
  opening_prompt: string,
  steps: { type: "array", items: object({ key: string, name: string, prompt: string }) },
  transitions: {
    type: "array",
    items: object({ from: string, to: string, label: string, condition: string })
  },
  closing_prompt: string,
  extraction_variables: {
    type: "array",
    items: object({ name: string, type: { type: "string", enum: ["string", "number", "boolean"] }, prompt: string })
  },
  disposition_codes: { type: "array", items: string }
})
