import { Schema } from "effect"

/**
 * Values as they travel in request and response bodies, each described precisely in the OpenAPI
 * document (the generator's defaults say too little: a timestamp is "a string", and `unknown` gets
 * a fixed `$id`, two of which make a document invalid).
 */

/** Any JSON value. */
export const JsonValue = Schema.Unknown.annotations({
  jsonSchema: { type: ["object", "array", "string", "number", "boolean", "null"] }
})

/** A JSON object with any fields. */
export const JsonObject = Schema.Record({ key: Schema.String, value: JsonValue })

const dateTime = { type: "string", format: "date-time" } as const

/** A point in time, sent as an ISO 8601 date-time in UTC (`2026-05-01T09:30:00.000Z`). */
export const Timestamp = Schema.Date.annotations({ jsonSchema: dateTime })

/** A point in time already held as its ISO 8601 text (log entries, transcript turns). */
export const TimestampText = Schema.String.annotations({ jsonSchema: dateTime })

/** A reply with nothing to say: `{}`. */
export const EmptyObject = Schema.Struct({}).annotations({
  jsonSchema: { type: "object", properties: {}, additionalProperties: false }
})
