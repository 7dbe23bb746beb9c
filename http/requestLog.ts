import { HttpMiddleware, HttpServerError, HttpServerRequest } from "@effect/platform"
import { Effect, Option } from "effect"

/** The path alone: a query string can carry a credential (a media stream's token, a signed upload). */
const pathOf = (url: string) => {
  const query = url.indexOf("?")
  return query === -1 ? url : url.slice(0, query)
}

/**
 * One log line per request: method, path, status and time taken, plus the cause when it failed.
 * The platform's request logger writes the whole URL, query string included.
 */
export const requestLog = HttpMiddleware.make((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) =>
    Effect.onExit(app, (exit) => {
      const [status, cause] = exit._tag === "Success"
        ? [exit.value.status, Option.none()]
        : ((stripped) => [stripped[0].status, stripped[1]] as const)(HttpServerError.causeResponseStripped(exit.cause))
      return Effect.log(Option.isSome(cause) ? cause.value : "Sent HTTP response").pipe(
        Effect.annotateLogs({ "http.method": request.method, "http.path": pathOf(request.url), "http.status": status })
      )
    }).pipe(Effect.withLogSpan("http.request"))
  )
)
