/**
 * What a value read from a request must be for the service to take it. PostgreSQL refuses a NUL
 * character in `text` and `jsonb`, and an unpaired UTF-16 surrogate cannot be written as UTF-8
 * (the driver would turn it into U+FFFD, silently changing what was sent). Numbers beyond 2^53
 * are no longer exact and overflow `bigint` columns; JSON nested without bound overflows the
 * stacks that walk it (schema decoding, error formatting, `jsonb` input); an array of a few
 * hundred thousand wrong items costs minutes of formatting one problem per item and per allowed
 * value. These rules hold for every string, number and array of a request, wherever it lands,
 * so each is refused as the caller's mistake before anything reaches the database.
 */

/** Deeper than any agent definition or tool schema needs, shallow enough for every recursive walk. */
export const MAX_JSON_DEPTH = 64

/** More nodes, edges, files or scopes than any one request needs. */
export const MAX_ARRAY_ITEMS = 1000

/** A request with more problems than this is told about the first ones only. */
const MAX_PROBLEMS = 20

const UNPAIRED_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/** Why a string cannot be stored as given, or `undefined` when it can. */
export const unstorableTextReason = (text: string): string | undefined => {
  if (text.includes("\u0000")) return "Text must not contain NUL (\\u0000) characters"
  if (UNPAIRED_SURROGATE.test(text)) return "Text must not contain unpaired UTF-16 surrogates (invalid Unicode)"
  return undefined
}

/** Why a number cannot be stored as given, or `undefined` when it can. */
export const unstorableNumberReason = (value: number): string | undefined =>
  Number.isFinite(value) && Math.abs(value) <= Number.MAX_SAFE_INTEGER
    ? undefined
    : `Number must lie between -${Number.MAX_SAFE_INTEGER} and ${Number.MAX_SAFE_INTEGER}`

interface ValueProblem {
  readonly path: ReadonlyArray<string | number>
  readonly reason: string
}

/**
 * Every place in a parsed JSON value (object keys included) that breaks the rules above, the
 * first few at most. The walk never goes deeper than `MAX_JSON_DEPTH`, whatever the input.
 */
export const jsonValueProblems = (value: unknown): ReadonlyArray<ValueProblem> => {
  const problems: Array<ValueProblem> = []
  const path: Array<string | number> = []
  const note = (reason: string | undefined) => {
    if (reason && problems.length < MAX_PROBLEMS) problems.push({ path: [...path], reason })
  }
  const visit = (node: unknown): void => {
    if (problems.length >= MAX_PROBLEMS) return
    if (typeof node === "string") return note(unstorableTextReason(node))
    if (typeof node === "number") return note(unstorableNumberReason(node))
    if (typeof node !== "object" || node === null) return
    if (path.length >= MAX_JSON_DEPTH) return note(`JSON must not be nested more than ${MAX_JSON_DEPTH} levels deep`)
    if (Array.isArray(node) && node.length > MAX_ARRAY_ITEMS) {
      return note(`Arrays must not hold more than ${MAX_ARRAY_ITEMS} items`)
    }
    const entries: Array<[string | number, unknown]> = Array.isArray(node)
      ? node.map((item, index) => [index, item])
      : Object.entries(node)
    for (const [key, item] of entries) {
      if (typeof key === "string") {
        const reason = unstorableTextReason(key)
        if (reason) note(`Keys: ${reason}`)
      }
      path.push(key)
      visit(item)
      path.pop()
    }
  }
  visit(value)
  return problems
}
