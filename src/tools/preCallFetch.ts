import { Either, ParseResult, Schema } from "effect"
import { atPointer } from "./toolResult.ts"

/**
 * An agent's pre-call fetch (`workflow_configurations.pre_call_fetch`): one of its organization's
 * HTTP API tools, called before the greeting with the run's context (the contact's fields, the
 * caller's number) for its presets; its JSON answer becomes conversation variables. When it fails
 * or times out, the conversation proceeds without them, or is refused (`on_failure: "refuse"`).
 */
export const PreCallFetch = Schema.Struct({
  tool_uuid: Schema.String,
  on_failure: Schema.optionalWith(Schema.Literal("proceed", "refuse"), { default: () => "proceed" as const })
})
export type PreCallFetch = typeof PreCallFetch.Type

/** The agent's pre-call fetch, if it has a usable one. */
export const preCallFetchOf = (configurations: Readonly<Record<string, unknown>> | null): PreCallFetch | null => {
  const raw = configurations?.["pre_call_fetch"]
  if (raw === undefined || raw === null) return null
  const decoded = Schema.decodeUnknownEither(PreCallFetch)(raw)
  return Either.isRight(decoded) ? decoded.right : null
}

/**
 * The context a conversation starts with once the fetch answered: the answer (the part its
 * pointer names) under `pre_call`, and each of its fields at the top level unless the run's own
 * context already sets it (a per-run value is the more specific one). Null when the answer is
 * not a JSON object.
 */
export const contextWithFetched = (
  context: Readonly<Record<string, unknown>>,
  answer: unknown,
  pointer: string | null | undefined
): Readonly<Record<string, unknown>> | null => {
  const part = pointer ? atPointer(answer, pointer) : answer
  if (part === null || typeof part !== "object" || Array.isArray(part)) return null
  return { ...(part as Record<string, unknown>), ...context, pre_call: part }
}

/** Why `pre_call_fetch` cannot be used as written, each problem under it; none when it can (or is absent). */
export const preCallFetchProblems = (
  configurations: Readonly<Record<string, unknown>> | null | undefined
): Array<{ path: Array<string | number>; message: string; type: string }> => {
  const raw = configurations?.["pre_call_fetch"]
  if (raw === undefined || raw === null) return []
  const decoded = Schema.decodeUnknownEither(PreCallFetch, { errors: "all", onExcessProperty: "error" })(raw)
  if (Either.isRight(decoded)) return []
  return ParseResult.ArrayFormatter.formatErrorSync(decoded.left).map((issue) => ({
    path: ["pre_call_fetch", ...issue.path.map((part) => (typeof part === "number" ? part : String(part)))],
    message: issue._tag === "Missing" ? "is required" : issue.message,
    type: "value_error"
  }))
}
