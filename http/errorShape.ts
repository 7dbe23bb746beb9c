import { HttpApiBuilder, HttpApiError, HttpServerError, HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Cause, Effect, Option } from "effect"
import * as crypto from "node:crypto"
import type { FieldProblem } from "../src/domain/errors.ts"
import { unsatisfiedRange } from "../src/storage/byteRanges.ts"
import { decodeProblems } from "./decodeProblems.ts"
import { type DomainErrorTag, errorStatus } from "./errors.ts"
import { loggedPath } from "./loggedPath.ts"
import { problemMessage } from "./problemMessage.ts"
import { checkRequestInput } from "./requestInput.ts"
import { v2MessageOf } from "./v2/vocabulary.ts"

type Version = "v1" | "v2"

const versionOf = (url: string): Version => (url.startsWith("/api/v2") ? "v2" : "v1")

const respond = (
  version: Version,
  status: number,
  code: string,
  message: string,
  problems: ReadonlyArray<FieldProblem> | undefined,
  headers: Record<string, string> = {}
) =>
  HttpServerResponse.unsafeJson(
    version === "v2"
      ? { error: { code, message, ...(problems ? { details: problems } : {}) } }
      : { detail: status === 422 && problems ? problems : message },
    { status, headers }
  )

const isDomainError = (error: unknown): error is { _tag: DomainErrorTag; message: string } =>
  typeof error === "object" && error !== null && "_tag" in error && (error._tag as string) in errorStatus

/** A known failure as the response a client should see. */
const fromFailure = (version: Version, error: unknown) => {
  if (error instanceof HttpApiError.HttpApiDecodeError) {
    return Option.some(respond(version, 422, "validation_error", "Request validation failed", decodeProblems(error)))
  }
  if (HttpServerError.isServerError(error) && error._tag === "RouteNotFound") {
    return Option.some(respond(version, 404, "not_found", "Not Found", undefined))
  }
  if (isDomainError(error)) {
    const { code, status } = errorStatus[error._tag]
    const problems = error._tag === "ValidationFailed"
      ? (error as unknown as { problems: Array<FieldProblem> }).problems.map((problem) => ({
        ...problem,
        msg: problemMessage(problem.loc, problem.msg)
      }))
      : undefined
    const headers: Record<string, string> = error._tag === "TooManyRequests"
      ? { "retry-after": String((error as unknown as { retryAfterSeconds: number }).retryAfterSeconds) }
      : error._tag === "Unauthenticated"
      ? { "www-authenticate": "Bearer" }
      : error._tag === "RangeNotSatisfiable"
      ? { "content-range": unsatisfiedRange((error as unknown as { size: number }).size) }
      : error._tag === "PayloadTooLarge" || error._tag === "UnsupportedMediaType"
      // The rest of the body may still be arriving: the connection closes after the answer
      // instead of reading it all to reuse the connection.
      ? { connection: "close" }
      : {}
    return Option.some(
      respond(version, status, code, version === "v2" ? v2MessageOf(error) : error.message, problems, headers)
    )
  }
  return Option.none()
}

/** A body that is not valid JSON is the client's mistake, reported as FastAPI does (422 `json_invalid`). */
const isUnreadableBody = (defect: unknown) =>
  HttpServerError.isServerError(defect) && defect._tag === "RequestError" && defect.reason === "Decode"

/**
 * The single place where every failure becomes a response: v1 gets FastAPI's `detail` shapes,
 * v2 the `{"error":{code,message,details?}}` envelope. Every request's input is checked here first
 * (`requestInput.ts`: body size and type, strings the database refuses). Unexpected defects are logged with a
 * request id and answered with a bare 500 (no stack traces leave the process).
 */
export const ErrorShapeLive = HttpApiBuilder.middleware((app) =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const requestId = request.headers["x-request-id"]?.slice(0, 128) || crypto.randomUUID()
    const version = versionOf(request.url)
    const response = yield* checkRequestInput.pipe(
      Effect.zipRight(app),
      Effect.annotateLogs("request_id", requestId),
      Effect.catchAllCause((cause) => {
        const failure = Cause.failureOption(cause)
        if (Option.isSome(failure)) {
          const shaped = fromFailure(version, failure.value)
          if (Option.isSome(shaped)) return Effect.succeed(shaped.value)
        }
        const defect = Cause.dieOption(cause)
        if (Option.isSome(defect) && isUnreadableBody(defect.value)) {
          return Effect.succeed(respond(version, 422, "validation_error", "Request body is not valid JSON", [
            { loc: ["body"], msg: "JSON decode error", type: "json_invalid" }
          ]))
        }
        // Interruption only: the cause holds no failure to type.
        if (Cause.isInterruptedOnly(cause)) return Effect.failCause(cause as Cause.Cause<never>)
        return Effect.logError("Unhandled failure while serving a request", cause).pipe(
          Effect.annotateLogs({ request_id: requestId, method: request.method, path: loggedPath(request.url) }),
          Effect.as(respond(version, 500, "internal_error", "Internal Server Error", undefined))
        )
      })
    )
    return HttpServerResponse.setHeader(response, "x-request-id", requestId)
  })
)
