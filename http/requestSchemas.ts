import { Schema } from "effect"

/**
 * Request schemas report every problem at once and name the request part they describe, which
 * `decodeProblems.ts` turns into the first element of FastAPI's `loc`.
 */
const requestPart = (suffix: "Request" | "Query" | "Path") =>
<Fields extends Schema.Struct.Fields>(name: string, fields: Fields) =>
  Schema.Struct(fields).annotations({
    identifier: `${name}${suffix}`,
    parseOptions: { errors: "all", onExcessProperty: "ignore" }
  })

export const bodySchema = requestPart("Request")
export const querySchema = requestPart("Query")
export const pathSchema = requestPart("Path")

/** Integer path ids as FastAPI reads them: digits only, positive. */
export const IdFromPath = Schema.NumberFromString.pipe(Schema.int(), Schema.positive())
