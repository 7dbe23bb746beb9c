import fc from "fast-check"

/**
 * Malformed requests for any operation of an OpenAPI document: values shaped after the
 * operation's declared schemas (so they reach past the first check) mixed with wrong types,
 * missing and extra fields, huge and deeply nested values, NUL bytes, lone surrogates,
 * out-of-range numbers and dates, and bodies that are not JSON at all.
 */

type Schema = Record<string, any>

export type Credential = "none" | "session" | "apiKey" | "bogus"

interface FuzzBody {
  readonly contentType: string | undefined
  readonly body: string | Uint8Array
}

export interface FuzzCase {
  readonly credential: Credential
  /** Each path parameter's value, percent-encoded. */
  readonly path: Record<string, string>
  /** The query string, percent-encoded, with its `?` (or empty). */
  readonly query: string
  readonly body: FuzzBody | undefined
  readonly accept: string | undefined
}

/** JSON text inserted as is: nesting deeper than a recursive serializer should walk. */
class RawJson {
  readonly text: string
  constructor(text: string) {
    this.text = text
  }
}

const toJson = (value: unknown): string => {
  if (value instanceof RawJson) return value.text
  if (Array.isArray(value)) return `[${value.map(toJson).join(",")}]`
  if (typeof value === "object" && value !== null) {
    const fields = Object.entries(value).filter(([, field]) => field !== undefined)
    return `{${fields.map(([key, field]) => `${JSON.stringify(key)}:${toJson(field)}`).join(",")}}`
  }
  return JSON.stringify(value) ?? "null"
}

/**
 * Percent-encodes every code point; a lone surrogate, which has no UTF-8 form, goes out as the
 * three bytes a careless encoder would produce for it (invalid UTF-8).
 */
const percentEncode = (text: string): string => {
  let out = ""
  for (const char of text) {
    const unit = char.charCodeAt(0)
    if (char.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      out += [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join("")
    } else {
      out += encodeURIComponent(char)
    }
  }
  return out
}

const nastyStrings = fc.constantFrom(
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy",
  "\ud83d",
  "😀",
  "\u202erevo",
  "' OR 1=1 --",
  "%00",
  "../../etc/passwd",
  "null",
  "-1",
  "1e309",
  "NaN",
  "<script>alert(1)</script>",
  "\r\nX-Injected: 1",
  "\\",
  "\"",
  "__proto__",
  "constructor"
)

const outOfRangeDates = fc.constantFrom(
  "2024-02-30T00:00:00Z",
  "2024-13-45",
  "2024-05-01T25:61:61Z",
  "275760-09-14T00:00:00Z",
  "+275760-09-13T00:00:00.001Z",
  "-271821-04-19T00:00:00Z",
  "+999999-01-01T00:00:00Z",
  "0000-00-00",
  "9999-12-31T23:59:59.999Z",
  "1970-01-01T00:00:00Z",
  "2024-05-01T00:00:00+99:00",
  "8640000000000001"
)

const hugeString = fc.tuple(
  fc.integer({ min: 1_000, max: 100_000 }),
  fc.constantFrom("a", "é", "\u0000", "😀", "\ud800")
)
  .map(([length, unit]) => unit.repeat(length))

// Nothing generated may name another host: a value that happened to pass validation as a URL
// would send real traffic there (fuzz traffic stays on loopback).
const withoutUrls = (text: string) => text.replaceAll("://", ":/")

/** Plausible text with a NUL or a lone surrogate inside, so it passes shape checks and travels on. */
const tainted = fc.tuple(
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constantFrom("\u0000", "\ud800", "\udc00"),
  fc.nat()
)
  .map(([plain, taint, at]) => {
    const cut = 1 + (at % plain.length)
    return plain.slice(0, cut) + taint + plain.slice(cut) + "x"
  })

const text: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: fc.string() },
  { weight: 6, arbitrary: tainted },
  { weight: 3, arbitrary: fc.string16bits() },
  { weight: 2, arbitrary: fc.fullUnicodeString() },
  { weight: 3, arbitrary: nastyStrings },
  { weight: 2, arbitrary: outOfRangeDates },
  { weight: 1, arbitrary: hugeString }
).map(withoutUrls)

const numbers = fc.oneof(
  fc.integer({ min: -5, max: 5 }),
  fc.constantFrom(0, -1, 2 ** 31, -(2 ** 31) - 1, 2 ** 53, 2 ** 53 + 2, 1e21, 1e308, -1e308, 1.5, 5e-324),
  fc.double({ noNaN: true, noDefaultInfinity: true })
)

const deeplyNested = fc.tuple(fc.integer({ min: 2, max: 12_000 }), fc.boolean())
  .map(([depth, arrays]) =>
    new RawJson(arrays ? "[".repeat(depth) + "]".repeat(depth) : "{\"a\":".repeat(depth) + "1" + "}".repeat(depth))
  )

const veryWide = fc.integer({ min: 1_000, max: 50_000 }).map((length) => new RawJson(`[${"0,".repeat(length - 1)}0]`))

/** Any JSON at all, including the pathological. */
const anyJson: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  { weight: 3, arbitrary: text },
  { weight: 2, arbitrary: numbers },
  { weight: 1, arbitrary: fc.boolean() },
  { weight: 1, arbitrary: fc.constant(null) },
  { weight: 1, arbitrary: deeplyNested },
  { weight: 1, arbitrary: veryWide }
)

const loopbackUrl = fc.constantFrom("http://127.0.0.1:9/v1", "http://127.0.0.1:9", "https://127.0.0.1:9/")

const extraFields = fc.dictionary(fc.oneof(fc.string(), nastyStrings), anyJson, { maxKeys: 2 })

/** Values shaped after a JSON schema, with a share of anything-goes at every level. */
export const schemaValues = (components: Record<string, Schema>) => {
  const resolve = (schema: Schema): Schema =>
    schema?.$ref ? resolve(components[String(schema.$ref).split("/").pop()!] ?? {}) : schema ?? {}

  const shaped = (raw: Schema, depth: number): fc.Arbitrary<unknown> => {
    const schema = resolve(raw)
    if (depth > 4) return fc.jsonValue({ maxDepth: 1 })
    if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
      return valueFor({ ...schema.allOf[0], ...schema, allOf: undefined }, depth)
    }
    if (Array.isArray(schema.enum)) return fc.constantFrom(...schema.enum)
    const members = schema.anyOf ?? schema.oneOf
    if (Array.isArray(members)) return fc.oneof(...members.map((member: Schema) => valueFor(member, depth + 1)))
    switch (schema.type) {
      case "object":
        return objectFor(schema, depth)
      case "array":
        return fc.array(valueFor(schema.items ?? {}, depth + 1), { maxLength: 4 })
      case "string":
        return schema.format === "date-time" ? fc.oneof(outOfRangeDates, text) : text
      case "integer":
      case "number":
        return numbers
      case "boolean":
        return fc.boolean()
      case "null":
        return fc.constant(null)
      default:
        return anyJson
    }
  }

  const objectFor = (schema: Schema, depth: number): fc.Arbitrary<unknown> => {
    const declared = Object.entries<Schema>(schema.properties ?? {})
    if (declared.length === 0) return fc.dictionary(text, anyJson, { maxKeys: 4 })
    const fields: Record<string, fc.Arbitrary<unknown>> = {}
    for (const [name, property] of declared) {
      fields[name] = /url$/i.test(name)
        ? fc.oneof(loopbackUrl, valueFor(property, depth + 1))
        : fc.option(valueFor(property, depth + 1), { nil: undefined, freq: 4 })
    }
    return fc.tuple(fc.record(fields), extraFields).map(([known, extra]) => ({ ...extra, ...known }))
  }

  const valueFor = (schema: Schema, depth: number): fc.Arbitrary<unknown> =>
    fc.oneof({ weight: 4, arbitrary: shaped(schema, depth) }, { weight: 1, arbitrary: anyJson })

  return (schema: Schema) => valueFor(schema, 0)
}

const CONTENT_TYPES = [
  undefined,
  "application/json",
  "application/json; charset=utf-16",
  "text/plain",
  "text/csv",
  "multipart/form-data",
  "multipart/form-data; boundary=fuzz",
  "application/x-www-form-urlencoded",
  "application/octet-stream",
  "application/xml",
  "*/*; q=garbage"
]

const notJson = fc.oneof(
  text,
  fc.constantFrom("{\"email\": ", "[1,2", "{'single': 'quotes'}", "NaN", "undefined", "\u0000", "a=1&b=%00&c")
)

const multipart: fc.Arbitrary<FuzzBody> = fc.constant({
  contentType: "multipart/form-data; boundary=fuzz",
  body: "--fuzz\r\nContent-Disposition: form-data; name=\"name\"\r\n\r\nx\r\n" +
    "--fuzz\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.csv\"\r\nContent-Type: text/csv\r\n\r\nphone_number\r\n+14155550101\r\n--fuzz--\r\n"
})

const someBody: fc.Arbitrary<FuzzBody> = fc.record({
  contentType: fc.constantFrom(...CONTENT_TYPES),
  body: fc.oneof(
    { weight: 3, arbitrary: notJson },
    { weight: 2, arbitrary: anyJson.map(toJson) },
    { weight: 1, arbitrary: fc.uint8Array({ maxLength: 4096 }) },
    { weight: 1, arbitrary: fc.constant(Uint8Array.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d])) }
  )
})

/** Any body with any content type, or a well-formed upload form. */
const rawBody: fc.Arbitrary<FuzzBody> = fc.oneof({ weight: 5, arbitrary: someBody }, {
  weight: 1,
  arbitrary: multipart
})

/** Path segments that are not the ids they should be, or are huge, besides ids that exist. */
const pathValue = (schema: Schema, knownIds: ReadonlyArray<number>): fc.Arbitrary<string> => {
  const candidates: Array<fc.Arbitrary<string>> = [
    fc.constantFrom(...knownIds.map(String)),
    fc.constantFrom(
      "0",
      "-1",
      "1",
      "2147483648",
      "9223372036854775808",
      "1.5",
      "1e3",
      "0x10",
      "%201",
      "%00",
      "%ED%A0%80",
      "%FF",
      "%2F",
      "..",
      "%2E%2E",
      "null"
    ),
    fc.integer({ min: 20, max: 5_000 }).map((length) => "9".repeat(length)),
    text.map(percentEncode)
  ]
  if (Array.isArray(schema.enum)) candidates.unshift(fc.constantFrom(...schema.enum.map(String)))
  return fc.oneof(...candidates)
}

const queryValue = (
  values: (schema: Schema) => fc.Arbitrary<unknown>,
  schema: Schema,
  knownIds: ReadonlyArray<number>
) =>
  fc.oneof(
    pathValue(schema, knownIds),
    text.map(percentEncode),
    values(schema).map((value) => percentEncode(typeof value === "string" ? value : toJson(value))),
    anyJson.map((value) => percentEncode(toJson(value)))
  )

interface OperationShape {
  readonly parameters: ReadonlyArray<{ readonly name: string; readonly in: string; readonly schema?: Schema }>
  readonly bodySchema: Schema | undefined
}

/** Requests for one operation: every part malformed in turn, with and without credentials. */
export const fuzzCases = (
  operation: OperationShape,
  components: Record<string, Schema>,
  knownIds: ReadonlyArray<number>
): fc.Arbitrary<FuzzCase> => {
  const values = schemaValues(components)
  const pathFields: Record<string, fc.Arbitrary<string>> = {}
  const queryFields: Record<string, fc.Arbitrary<string | undefined>> = {}
  for (const parameter of operation.parameters) {
    if (parameter.in === "path") pathFields[parameter.name] = pathValue(parameter.schema ?? {}, knownIds)
    if (parameter.in === "query") {
      queryFields[parameter.name] = fc.option(queryValue(values, parameter.schema ?? {}, knownIds), {
        nil: undefined,
        freq: 3
      })
    }
  }
  const query = fc.tuple(
    fc.record(queryFields),
    fc.option(fc.tuple(text.map(percentEncode), text.map(percentEncode)), { nil: undefined, freq: 3 }),
    fc.boolean()
  ).map(([named, extra, repeated]) => {
    const pairs = Object.entries(named).filter((pair): pair is [string, string] => pair[1] !== undefined)
    if (repeated && pairs.length > 0) pairs.push(pairs[0]!)
    if (extra) pairs.push(extra)
    return pairs.length === 0
      ? ""
      : `?${pairs.map(([name, value]) => `${encodeURIComponent(name)}=${value}`).join("&")}`
  })
  const jsonBody = (schema: Schema) =>
    values(schema).map((value): FuzzBody => ({ contentType: "application/json", body: toJson(value) }))
  const body: fc.Arbitrary<FuzzBody | undefined> = operation.bodySchema
    ? fc.oneof({ weight: 6, arbitrary: jsonBody(operation.bodySchema) }, { weight: 2, arbitrary: rawBody }, {
      weight: 1,
      arbitrary: fc.constant(undefined)
    })
    : fc.option(fc.oneof(rawBody, jsonBody({})), { nil: undefined, freq: 4 })
  return fc.record({
    // Mostly valid credentials: they let a case past authentication, into the handlers.
    credential: fc.oneof(
      { weight: 3, arbitrary: fc.constantFrom<Credential>("session", "apiKey") },
      { weight: 1, arbitrary: fc.constantFrom<Credential>("none", "bogus") }
    ),
    path: fc.record(pathFields),
    query,
    body,
    accept: fc.constantFrom(undefined, "application/json", "text/event-stream", "*/*")
  })
}

/** A short, printable account of a case for the failure report. */
export const describeCase = (method: string, path: string, fuzzCase: FuzzCase): string => {
  const excerpt = (value: string | Uint8Array) => {
    const shown = typeof value === "string" ? value : `<${value.byteLength} bytes>`
    return JSON.stringify(shown.length > 200 ? `${shown.slice(0, 200)}… (${shown.length} chars)` : shown)
  }
  const body = fuzzCase.body
    ? ` body(${fuzzCase.body.contentType ?? "no content-type"})=${excerpt(fuzzCase.body.body)}`
    : ""
  return `${method.toUpperCase()} ${excerpt(path)} as ${fuzzCase.credential}${body}`
}
