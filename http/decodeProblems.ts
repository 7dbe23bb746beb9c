import type { HttpApiError } from "@effect/platform"
import type { FieldProblem } from "../src/domain/errors.ts"

/**
 * Which part of the request a decode error came from. v3's decode error drops it, so request
 * schemas carry it in their identifier (`…Query`, `…Path`, anything else is the body; see
 * `requestSchemas.ts`) and the formatted message starts with that identifier.
 */
const locationOf = (message: string): "body" | "query" | "path" => {
  const head = message.split("\n", 1)[0] ?? ""
  if (/Query\b/.test(head)) return "query"
  if (/Path\b/.test(head)) return "path"
  return "body"
}

type Issue = HttpApiError.HttpApiDecodeError["issues"][number]

const typeOf = (issue: Issue): string => {
  switch (issue._tag) {
    case "Missing":
      return "missing"
    case "Unexpected":
      return "extra_forbidden"
    case "Type": {
      const expected = /Expected (\w+)/.exec(issue.message)?.[1] ?? ""
      if (/^string$/i.test(expected)) return "string_type"
      if (/^(number|int|Int|NonNegativeInt|PositiveInt)$/i.test(expected)) return "int_parsing"
      if (/^boolean$/i.test(expected)) return "bool_type"
      if (/^(array|ReadonlyArray)$/i.test(expected)) return "list_type"
      return issue.message.includes("Expected \"") ? "literal_error" : "type_error"
    }
    default:
      return "value_error"
  }
}

/** FastAPI-style problems (`loc`, `msg`, `type`) from an Effect decode error, every issue at once. */
export const decodeProblems = (error: HttpApiError.HttpApiDecodeError): Array<FieldProblem> => {
  const location = locationOf(error.message)
  return error.issues.map((issue) => ({
    loc: [location, ...issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)))],
    msg: issue._tag === "Missing" ? "Field required" : issue.message,
    type: typeOf(issue)
  }))
}
