import { HttpMiddleware, HttpServerError, HttpServerRequest, HttpTraceContext } from "@effect/platform"
import { Effect, Option } from "effect"
import { loggedPath } from "./loggedPath.ts"

/**
 * A server span and one log line per request: method, path, status, time taken, and the cause when
 * it failed. It replaces the platform's tracer and logger, which record the whole URL, query string
 * included, and every request header; the path is the logged one (loggedPath.ts).
 */
export const requestTelemetry = HttpMiddleware.make((app) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const path = loggedPath(request.url)
    return Effect.onExit(app, (exit) => {
      const [status, cause] = exit._tag === "Success"
        ? [exit.value.status, Option.none()]
        : ((stripped) => [stripped[0].status, stripped[1]] as const)(HttpServerError.causeResponseStripped(exit.cause))
      return Effect.annotateCurrentSpan("http.response.status_code", status).pipe(
        Effect.zipRight(Effect.log(Option.isSome(cause) ? cause.value : "Sent HTTP response")),
        Effect.annotateLogs({ "http.method": request.method, "http.path": path, "http.status": status })
      )
    }).pipe(
      Effect.withLogSpan("http.request"),
      Effect.withSpan(`http.server ${request.method}`, {
        kind: "server",
        parent: Option.getOrUndefined(HttpTraceContext.fromHeaders(request.headers)),
        captureStackTrace: false,
        attributes: {
          "http.request.method": request.method,
          "url.path": path,
          ...(request.headers["user-agent"] ? { "user_agent.original": request.headers["user-agent"] } : {}),
          ...(Option.isSome(request.remoteAddress) ? { "client.address": request.remoteAddress.value } : {})
        }
      })
    )
  })
)
