/**
 * `{{name}}` references in prompts and greetings, with an optional fallback: `{{name | default}}`.
 * Names may be dotted (`{{customer.first_name}}`) to reach into nested context values.
 */
const REFERENCE = /\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*(?:\|\s*([^}]*?)\s*)?\}\}/g

interface VariableReference {
  readonly name: string
  readonly fallback: string | undefined
}

export const referencesIn = (text: string): Array<VariableReference> =>
  [...text.matchAll(REFERENCE)].map((match) => ({ name: match[1]!, fallback: match[2] }))

/**
 * Own keys only: a context is data (CSV columns, extracted values), and `{{constructor}}` or
 * `{{toString}}` must find a column of that name or nothing, never what every object inherits.
 */
const lookup = (context: Readonly<Record<string, unknown>>, name: string): unknown => {
  if (Object.hasOwn(context, name)) return context[name]
  let value: unknown = context
  for (const part of name.split(".")) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, part)) return undefined
    value = (value as Record<string, unknown>)[part]
  }
  return value
}

/** A context value as text: strings as they are, anything else as JSON. */
const asText = (value: unknown): string => (typeof value === "string" ? value : JSON.stringify(value))

/** Replaces each reference with its context value, else its fallback, else an empty string. */
export const renderTemplate = (text: string, context: Readonly<Record<string, unknown>>): string =>
  renderTemplateWith(text, context, (piece) => piece)

/**
 * `renderTemplate` with each substituted piece passed through `format` (a URL encodes it), so
 * the values of a template cannot change its literal parts.
 */
export const renderTemplateWith = (
  text: string,
  context: Readonly<Record<string, unknown>>,
  format: (piece: string) => string
): string =>
  text.replace(REFERENCE, (_, name: string, fallback: string | undefined) => {
    const value = lookup(context, name)
    if (value === undefined || value === null || value === "") return fallback === undefined ? "" : format(fallback)
    return format(asText(value))
  })

/** The context value a whole-template reference (`{{name}}` and nothing else) names, with its JSON type; else undefined. */
export const soleReferenceValue = (text: string, context: Readonly<Record<string, unknown>>): unknown => {
  const match = /^\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\s*\}\}$/.exec(text)
  return match ? lookup(context, match[1]!) : undefined
}

/** Every string inside a JSON value (a workflow definition), for finding its references. */
const stringsIn = (value: unknown, into: Array<string> = []): Array<string> => {
  if (typeof value === "string") into.push(value)
  else if (Array.isArray(value)) value.forEach((item) => stringsIn(item, into))
  else if (value !== null && typeof value === "object") Object.values(value).forEach((item) => stringsIn(item, into))
  return into
}

/**
 * Top-level variable names a definition needs from each run's context without a fallback:
 * the columns a contacts CSV must provide.
 */
export const requiredVariables = (definition: unknown): Array<string> => {
  const names = new Set<string>()
  for (const text of stringsIn(definition)) {
    for (const reference of referencesIn(text)) {
      if (reference.fallback === undefined) names.add(reference.name.split(".")[0]!)
    }
  }
  return [...names].sort()
}

const BRACED = /\{\{([^{}]*)\}\}/g
const WELL_FORMED = /^\s*[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*\s*(?:\|[^}]*)?$/

/**
 * `{{…}}` spans that are not valid references (`{{}}`, `{{ 1st }}`, `{{a b}}`), plus a `{{` that is
 * never closed: text that would otherwise reach the caller verbatim.
 */
export const malformedReferences = (text: string): Array<string> => {
  const problems = [...text.matchAll(BRACED)].filter((match) => !WELL_FORMED.test(match[1]!)).map((match) => match[0])
  const unclosed = text.replace(BRACED, "").indexOf("{{")
  if (unclosed >= 0) problems.push(text.slice(unclosed, unclosed + 20))
  return problems
}
