import { HttpIncomingMessage, HttpMethod, type HttpServerError, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import { type FieldProblem, PayloadTooLarge, UnsupportedMediaType, ValidationFailed } from "../src/domain/errors.ts"
import { jsonValueProblems, unstorableTextReason } from "../src/domain/storableValues.ts"
import { bodyLimitOf, sizeText } from "./bodyLimits.ts"
import { pathOf } from "./requestPath.ts"

const JSON_TYPE = "application/json"
const FORM_TYPE = "application/x-www-form-urlencoded"

const mediaTypeOf = (contentType: string | undefined) =>
  contentType === undefined ? undefined : contentType.split(";", 1)[0]!.trim().toLowerCase()

/** HTTP/1.1 framing: without Content-Length or Transfer-Encoding a request has no body. */
const declaresBody = (headers: HttpServerRequest.HttpServerRequest["headers"]) =>
  headers["transfer-encoding"] !== undefined ||
  (headers["content-length"] !== undefined && headers["content-length"] !== "0")

/** The platform's reader gives up with this cause once a body passes `MaxBodySize`. */
const isOverLimit = (error: HttpServerError.RequestError) =>
  error.cause instanceof Error && error.cause.message === "maxBytes exceeded"

const invalid = (message: string, problems: ReadonlyArray<FieldProblem>) => new ValidationFailed({ message, problems })

const textProblems = (part: "query" | "body", entries: Iterable<[string, string]>): Array<FieldProblem> => {
  const problems: Array<FieldProblem> = []
  for (const [key, value] of entries) {
    const reason = unstorableTextReason(key) ?? unstorableTextReason(value)
    if (reason) problems.push({ loc: [part, key], msg: reason, type: "value_error" })
  }
  return problems
}

const JSON_INVALID: FieldProblem = { loc: ["body"], msg: "JSON decode error", type: "json_invalid" }

const jsonBodyProblems = (text: string): Array<FieldProblem> => {
  let value: unknown
  try {
    value = JSON.parse(text)
  } catch {
    return [JSON_INVALID]
  }
  return jsonValueProblems(value).map(({ path, reason }) => ({
    loc: ["body", ...path],
    msg: reason,
    type: "value_error"
  }))
}

/** Whether `text` can be a JSON document: JSON text starts (after white space) with one of these. */
const looksLikeJson = (text: string) => /^\s*[{["0-9tfn-]/.test(text)

/** What the endpoint will read from the body: as declared, or every way a carrier's adapter may parse it. */
const bodyProblems = (policy: "Decoded" | "Raw", mediaType: string | undefined, text: string): Array<FieldProblem> => {
  if (policy === "Decoded") {
    return mediaType === FORM_TYPE
      ? textProblems("body", new URLSearchParams(text))
      : jsonBodyProblems(text)
  }
  // A form body (a carrier's callback) is not JSON: parsing it anyway would throw, and throwing costs a stack trace.
  const asJson = looksLikeJson(text) ? jsonBodyProblems(text).filter((problem) => problem !== JSON_INVALID) : []
  return [...textProblems("body", new URLSearchParams(text)), ...asJson]
}

/**
 * The checks every request passes before it is routed, whatever it is for (and so before
 * authentication): a body larger than its route takes is refused with 413 from its
 * Content-Length alone, or once that many bytes have arrived when it is chunked, and is never
 * held whole beyond that size; a body type no endpoint decodes is refused with 415 (multipart
 * bodies would otherwise be spooled to disk part by part); and no string of the URL or body reaches a
 * handler with a character the database refuses, nor a number or a nesting it cannot take (422).
 * The body read here is the one the endpoint decodes: the platform keeps it for the request.
 */
export const checkRequestInput = Effect.gen(function*() {
  const request = yield* HttpServerRequest.HttpServerRequest
  const path = pathOf(request.url)
  const query = request.url.slice(path.length + 1)
  if (/%00/.test(path)) {
    return yield* invalid("Request path is invalid", [{
      loc: ["path"],
      msg: "Text must not contain NUL (\\u0000) characters",
      type: "value_error"
    }])
  }
  const queryProblems = textProblems("query", new URLSearchParams(query))
  if (queryProblems.length > 0) return yield* invalid("Request query is invalid", queryProblems)

  const limit = bodyLimitOf(path)
  if (!HttpMethod.hasBody(request.method) || limit._tag === "Streamed" || !declaresBody(request.headers)) return
  // Made only when needed: an error captures a stack trace, which every carrier callback would pay for.
  const tooLarge = () =>
    new PayloadTooLarge({
      message: `Request body is larger than this endpoint takes (${sizeText(limit.maxBytes)})`
    })
  if (Number(request.headers["content-length"] ?? 0) > limit.maxBytes) return yield* tooLarge()
  const mediaType = mediaTypeOf(request.headers["content-type"])
  if (limit._tag === "Decoded" && mediaType !== undefined && mediaType !== JSON_TYPE && mediaType !== FORM_TYPE) {
    return yield* new UnsupportedMediaType({
      message: `Request bodies are ${JSON_TYPE} (or ${FORM_TYPE}), not ${mediaType}`
    })
  }
  const text = yield* request.text.pipe(
    HttpIncomingMessage.withMaxBodySize(Option.some(limit.maxBytes)),
    Effect.catchAll((error) => (isOverLimit(error) ? Effect.fail(tooLarge()) : Effect.die(error)))
  )
  if (text === "") return
  const problems = bodyProblems(limit._tag, mediaType, text)
  if (problems.length === 0) return
  return yield* problems[0]!.type === "json_invalid"
    ? invalid("Request body is not valid JSON", problems)
    : invalid("Request validation failed", problems)
})
