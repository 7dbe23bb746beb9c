import type { ParameterType, ToolParameter } from "./toolDefinition.ts"

/** The JSON Schema of a tool's parameters, as the model is offered it. */
export const parametersSchema = (parameters: ReadonlyArray<ToolParameter>): Record<string, unknown> => ({
  type: "object",
  properties: Object.fromEntries(
    parameters.map((parameter) => [
      parameter.name,
      { type: parameter.type, ...(parameter.description ? { description: parameter.description } : {}) }
    ])
  ),
  required: parameters.filter((parameter) => parameter.required).map((parameter) => parameter.name),
  additionalProperties: false
})

const typeOf = (value: unknown): ParameterType | "null" | "other" =>
  value === null
    ? "null"
    : Array.isArray(value)
    ? "array"
    : typeof value === "string" || typeof value === "boolean" || typeof value === "object"
    ? typeof value as ParameterType
    : typeof value === "number" && Number.isFinite(value)
    ? "number"
    : "other"

export type ArgumentCheck =
  | { readonly _tag: "Valid"; readonly values: Readonly<Record<string, unknown>> }
  | { readonly _tag: "Invalid"; readonly problems: ReadonlyArray<string> }

/**
 * The model's arguments (JSON text) checked against the parameters' schema before anything is
 * sent: JSON, an object, each required parameter present, each value of its type, nothing else.
 * A model that gets this wrong is told what, so it can call again correctly.
 */
export const checkArguments = (parameters: ReadonlyArray<ToolParameter>, text: string): ArgumentCheck => {
  let parsed: unknown
  try {
    parsed = text.trim() === "" ? {} : JSON.parse(text)
  } catch {
    return { _tag: "Invalid", problems: ["the arguments are not valid JSON"] }
  }
  if (typeOf(parsed) !== "object") return { _tag: "Invalid", problems: ["the arguments must be a JSON object"] }
  const values = parsed as Record<string, unknown>
  const problems: Array<string> = []
  const known = new Map(parameters.map((parameter) => [parameter.name, parameter]))
  for (const parameter of parameters) {
    const value = values[parameter.name]
    if (value === undefined || value === null) {
      if (parameter.required) problems.push(`"${parameter.name}" is required`)
      continue
    }
    const actual = typeOf(value)
    if (actual !== parameter.type) problems.push(`"${parameter.name}" must be a ${parameter.type}, not ${actual}`)
  }
  for (const name of Object.keys(values)) {
    if (!known.has(name)) problems.push(`"${name}" is not a parameter of this tool`)
  }
  return problems.length > 0 ? { _tag: "Invalid", problems } : { _tag: "Valid", values }
}

/** The model's arguments as a JSON object (empty text is no arguments); null when they are not one. */
export const argumentsObjectOf = (text: string): Record<string, unknown> | null => {
  try {
    const value: unknown = text.trim() === "" ? {} : JSON.parse(text)
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? value as Record<string, unknown>
      : null
  } catch {
    return null
  }
}
