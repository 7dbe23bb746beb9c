import { ParseResult, Schema } from "effect"

/** A location inside a definition: keys and array indexes from its root. */
export type Path = ReadonlyArray<string | number>

/** Decodes reporting every issue, keeping fields the schema does not name. */
export const decodeAll = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "preserve" })(value)

/**
 * Decode issues, one per field: a value that matches no member of a union is reported once per
 * member by the formatter, so those are merged into a single "Expected a | b" message.
 */
export const issuesOf = (error: ParseResult.ParseError) => {
  const byPath = new Map<string, Array<{ _tag: string; path: Array<string | number>; message: string }>>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.map((part): string | number => (typeof part === "number" ? part : String(part)))
    const key = JSON.stringify(path)
    byPath.set(key, [...(byPath.get(key) ?? []), { _tag: issue._tag, path, message: issue.message }])
  }
  return [...byPath.values()].map((group) => {
    const expected = group.map((issue) => /^Expected (.+), actual (.+)$/s.exec(issue.message))
    if (group.length > 1 && expected.every((match) => match !== null)) {
      const options = [...new Set(expected.map((match) => match![1]))].join(" | ")
      return { ...group[0]!, message: `Expected ${options}, actual ${expected[0]![2]}` }
    }
    return group[0]!
  })
}

/** `nodes[0].data.prompt` */
export const dotted = (path: Path): string =>
  path.reduce<string>(
    (text, part) => (typeof part === "number" ? `${text}[${part}]` : text ? `${text}.${part}` : part),
    ""
  )

/** The value as an object, or an empty one. */
export const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

/** An issue in words, prefixed with the field it is about. */
export const describe = (field: string, issue: { _tag: string; message: string }) =>
  issue._tag === "Missing"
    ? `${field} is required`
    : /^[A-Z]/.test(issue.message)
    ? `${field}: ${issue.message}`
    : `${field} ${issue.message}`
