import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import {
  Conflict,
  FieldProblem,
  Forbidden,
  NotFound,
  PayloadTooLarge,
  RangeNotSatisfiable,
  TooManyRequests,
  Unauthenticated,
  UpstreamFailed,
  ValidationFailed
} from "../src/domain/errors.ts"
import { JsonValue } from "../src/domain/wireTypes.ts"

/**
 * The one table from domain failures to HTTP: status, and the stable v2 error code.
 * `errorShape.ts` renders bodies from it; endpoint declarations reuse the annotated schemas
 * below so the OpenAPI document lists the same statuses.
 */
export const errorStatus = {
  Unauthenticated: { status: 401, code: "unauthorized" },
  Forbidden: { status: 403, code: "forbidden" },
  NotFound: { status: 404, code: "not_found" },
  Conflict: { status: 409, code: "conflict" },
  PayloadTooLarge: { status: 413, code: "payload_too_large" },
  UnsupportedMediaType: { status: 415, code: "unsupported_media_type" },
  RangeNotSatisfiable: { status: 416, code: "range_not_satisfiable" },
  ValidationFailed: { status: 422, code: "validation_error" },
  TooManyRequests: { status: 429, code: "rate_limited" },
  UpstreamFailed: { status: 502, code: "upstream_error" }
} as const

export type DomainErrorTag = keyof typeof errorStatus

const withStatus = <S extends Schema.Schema.Any>(schema: S, tag: DomainErrorTag): S =>
  schema.annotations(HttpApiSchema.annotations({ status: errorStatus[tag].status })) as S

export const HttpUnauthenticated = withStatus(Unauthenticated, "Unauthenticated")
export const HttpForbidden = withStatus(Forbidden, "Forbidden")
export const HttpNotFound = withStatus(NotFound, "NotFound")
export const HttpConflict = withStatus(Conflict, "Conflict")
export const HttpPayloadTooLarge = withStatus(PayloadTooLarge, "PayloadTooLarge")
export const HttpRangeNotSatisfiable = withStatus(RangeNotSatisfiable, "RangeNotSatisfiable")
export const HttpValidationFailed = withStatus(ValidationFailed, "ValidationFailed")
export const HttpTooManyRequests = withStatus(TooManyRequests, "TooManyRequests")
export const HttpUpstreamFailed = withStatus(UpstreamFailed, "UpstreamFailed")

export const HttpAuthFailure = Schema.Union(HttpUnauthenticated, HttpForbidden)

/** Body schemas as clients see them (used for the OpenAPI document). */
export const V1ValidationError = FieldProblem.annotations({ identifier: "ValidationError" })
export const HTTPValidationError = Schema.Struct({ detail: Schema.Array(V1ValidationError) }).annotations({
  identifier: "HTTPValidationError"
})
export const HTTPError = Schema.Struct({ detail: Schema.String }).annotations({ identifier: "HTTPError" })
export const V2ErrorDetail = Schema.Struct({
  code: Schema.String,
  message: Schema.String,
  details: Schema.optional(JsonValue)
}).annotations({ identifier: "V2_ErrorDetail" })
export const V2ErrorResponse = Schema.Struct({ error: V2ErrorDetail }).annotations({ identifier: "ErrorResponse" })
