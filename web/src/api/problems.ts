/** One field problem the API reported, as v1 (`{loc, msg}`) and v2 (`details`) both carry it. */
export interface FieldProblem {
  readonly field: string
  readonly message: string
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const fieldOf = (loc: unknown) =>
  Array.isArray(loc) ? loc.filter((part) => part !== "body" && part !== "query" && part !== "path").join(".") : ""

const problemsOf = (list: unknown): Array<FieldProblem> =>
  Array.isArray(list)
    ? list.filter(isRecord).map((entry) => ({ field: fieldOf(entry.loc), message: String(entry.msg ?? entry.message) }))
    : []

/** An API failure in words for the person at the screen: the summary and the field problems. */
export class ApiProblem extends Error {
  constructor(readonly status: number, message: string, readonly fields: ReadonlyArray<FieldProblem> = []) {
    super(message)
  }
}

/** Reads the v1 (`detail`) or v2 (`error.message`) body of a failed response. */
export const problemOf = (status: number, body: unknown): ApiProblem => {
  if (isRecord(body) && typeof body.detail === "string") return new ApiProblem(status, body.detail)
  if (isRecord(body) && Array.isArray(body.detail)) {
    const fields = problemsOf(body.detail)
    return new ApiProblem(
      status,
      fields.map((p) => (p.field ? `${p.field}: ${p.message}` : p.message)).join("; "),
      fields
    )
  }
  if (isRecord(body) && isRecord(body.error)) {
    return new ApiProblem(status, String(body.error.message), problemsOf(body.error.details))
  }
  if (status === 0) return new ApiProblem(0, "The server could not be reached. Is talkgraph running?")
  return new ApiProblem(status, `The server answered ${status}.`)
}

/**
 * Unwraps an openapi-fetch result: the data, or an ApiProblem. Pages catch that one error type and
 * show its words (and field problems beside their fields).
 */
export const ok = async <T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>
): Promise<T> => {
  const result = await call.catch(() => undefined)
  if (!result) throw problemOf(0, undefined)
  if (result.response.ok) return result.data as T
  throw problemOf(result.response.status, result.error)
}

export const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error))
