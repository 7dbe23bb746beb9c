import type { HttpApiError } from "@effect/platform"
import type { FieldProblem } from "../src/domain/errors.ts"
import { problemMessage } from "./problemMessage.ts"

/**
 * Which part of the request a decode error came from. v3's decode error drops it, so request
 * schemas carry it in their name (`…Query`, `…Path`, anything else is the body; see
 * `requestSchemas.ts`) and the formatted message starts with that name.
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

const LITERAL_MISMATCH = /^Expected (".*?"|\d+|true|false|null)(?:, actual|$)/

/**
 * A value outside a union of literals fails once per member; the caller wants one problem
 * naming the allowed values, as FastAPI reports an enum.
 */
const mergeSameLocation = (issues: ReadonlyArray<Issue>, loc: FieldProblem["loc"]): FieldProblem => {
  const first = issues[0]!
  if (issues.length === 1) {
    return { loc, msg: first._tag === "Missing" ? "Field required" : first.message, type: typeOf(first) }
  }
  const allowed = issues.map((issue) => LITERAL_MISMATCH.exec(issue.message)?.[1])
  if (allowed.every((value) => value !== undefined)) {
    return { loc, msg: `Input should be one of: ${allowed.join(", ")}`, type: "literal_error" }
  }
  return { loc, msg: issues.map((issue) => issue.message).join("; "), type: typeOf(first) }
}

/**
 * An optional field holding a bad value also fails its "or undefined" alternative; that issue
 * says nothing the deeper one does not.
 */
const isOptionalAlternative = (issue: Issue, all: ReadonlyArray<Issue>) =>
  issue.message.startsWith("Expected undefined") &&
  all.some((other) => other !== issue && issue.path.every((segment, index) => other.path[index] === segment))

/** FastAPI-style problems (`loc`, `msg`, `type`) from an Effect decode error, every issue at once. */
export const decodeProblems = (error: HttpApiError.HttpApiDecodeError): Array<FieldProblem> => {
  const location = locationOf(error.message)
  const byLocation = new Map<string, { loc: FieldProblem["loc"]; issues: Array<Issue> }>()
  for (const issue of error.issues.filter((issue) => !isOptionalAlternative(issue, error.issues))) {
    const loc = [location, ...issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)))]
    const key = JSON.stringify(loc)
    const entry = byLocation.get(key) ?? { loc, issues: [] }
    entry.issues.push({ ...issue, message: problemMessage(loc, issue.message) })
    byLocation.set(key, entry)
  }
  return [...byLocation.values()].map(({ issues, loc }) => mergeSameLocation(issues, loc))
}
