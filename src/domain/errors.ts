import { Schema } from "effect"

/**
 * Domain failures, free of HTTP. `http/errorShape.ts` is the one place that turns them into
 * status codes and the v1 / v2 bodies.
 */
export class Unauthenticated extends Schema.TaggedError<Unauthenticated>()("Unauthenticated", {
  message: Schema.String
}) {}

export class Forbidden extends Schema.TaggedError<Forbidden>()("Forbidden", {
  message: Schema.String
}) {}

export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  resource: Schema.String,
  id: Schema.Union(Schema.String, Schema.Number)
}) {
  override get message() {
    return `${this.resource} ${this.id} not found`
  }
}

export class Conflict extends Schema.TaggedError<Conflict>()("Conflict", {
  message: Schema.String
}) {}

/** One invalid field: where (`body`/`query`/`path` first) and why, FastAPI style. */
export const FieldProblem = Schema.Struct({
  loc: Schema.Array(Schema.Union(Schema.String, Schema.Number)),
  msg: Schema.String,
  type: Schema.String
})
export type FieldProblem = typeof FieldProblem.Type

export class ValidationFailed extends Schema.TaggedError<ValidationFailed>()("ValidationFailed", {
  message: Schema.String,
  problems: Schema.Array(FieldProblem)
}) {
  static single(loc: ReadonlyArray<string | number>, msg: string, type = "value_error") {
    return new ValidationFailed({ message: msg, problems: [{ loc, msg, type }] })
  }
}

export class TooManyRequests extends Schema.TaggedError<TooManyRequests>()("TooManyRequests", {
  message: Schema.String,
  retryAfterSeconds: Schema.Number
}) {}

export class PayloadTooLarge extends Schema.TaggedError<PayloadTooLarge>()("PayloadTooLarge", {
  message: Schema.String
}) {}

/** A request body of a type the endpoint does not read. */
export class UnsupportedMediaType extends Schema.TaggedError<UnsupportedMediaType>()("UnsupportedMediaType", {
  message: Schema.String
}) {}

/** An upstream provider (LLM, carrier, storage) failed; the message is ours, never the provider's raw text. */
export class UpstreamFailed extends Schema.TaggedError<UpstreamFailed>()("UpstreamFailed", {
  message: Schema.String
}) {}

/** A byte range that starts past the end of what was asked for; `size` is what there is. */
export class RangeNotSatisfiable extends Schema.TaggedError<RangeNotSatisfiable>()("RangeNotSatisfiable", {
  message: Schema.String,
  size: Schema.Number
}) {}
