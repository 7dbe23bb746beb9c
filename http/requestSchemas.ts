import { ParseResult, Schema } from "effect"

type Part = "Request" | "Query" | "Path"

/**
 * Request schemas report every problem at once and name the request part they describe, which
 * `decodeProblems.ts` turns into the first element of FastAPI's `loc` (the decode error's message
 * starts with that name). Bodies name it as an identifier, so the document lists them as named
 * components; path and query schemas as a title, so the document inlines them and declares each
 * field as its own parameter (the platform lists no parameters for a schema behind a `$ref`).
 */
const requestPart = (suffix: Part) => <Fields extends Schema.Struct.Fields>(name: string, fields: Fields) =>
  Schema.Struct(fields).annotations({
    ...(suffix === "Request" ? { identifier: `${name}${suffix}` } : { title: `${name}${suffix}` }),
    parseOptions: { errors: "all", onExcessProperty: "ignore" }
  })

export const bodySchema = requestPart("Request")
export const querySchema = requestPart("Query")
export const pathSchema = requestPart("Path")

/**
 * An integer read from a path or query string (digits, as FastAPI reads them), documented as the
 * integer it stands for rather than as the string it arrives in.
 */
export const IntFromString = (
  range: { readonly minimum?: number; readonly maximum?: number; readonly description?: string } = {}
) => {
  const { maximum, minimum } = range
  const int = Schema.NumberFromString.pipe(Schema.int())
  const bounded = minimum !== undefined && maximum !== undefined
    ? int.pipe(Schema.between(minimum, maximum))
    : minimum !== undefined
    ? int.pipe(Schema.greaterThanOrEqualTo(minimum))
    : maximum !== undefined
    ? int.pipe(Schema.lessThanOrEqualTo(maximum))
    : int
  return bounded.annotations({ jsonSchema: { type: "integer", ...range } })
}

/** Integer path ids: positive. */
export const IdFromPath = IntFromString({ minimum: 1 })

const TRUE_WORDS = new Set(["true", "1", "yes", "on", "t", "y"])
const FALSE_WORDS = new Set(["false", "0", "no", "off", "f", "n"])

/** A query-string flag, read as FastAPI (pydantic) reads one: `true`/`false`, `1`/`0`, `yes`/`no`, `on`/`off`. */
export const BooleanFromQuery = Schema.transformOrFail(Schema.String, Schema.Boolean, {
  strict: true,
  decode: (raw, _, ast) => {
    const word = raw.trim().toLowerCase()
    if (TRUE_WORDS.has(word)) return ParseResult.succeed(true)
    if (FALSE_WORDS.has(word)) return ParseResult.succeed(false)
    return ParseResult.fail(
      new ParseResult.Type(ast, raw, "Input should be a valid boolean, unable to interpret input")
    )
  },
  encode: (flag) => ParseResult.succeed(String(flag))
}).annotations({ jsonSchema: { type: "boolean" } })
