import { HttpServerRequest, HttpServerResponse } from "@effect/platform"
import { Effect, HashMap, Logger, LogLevel, Tracer } from "effect"
import { describe, expect, it } from "vitest"
import { requestTelemetry } from "../http/requestTelemetry.ts"

interface Recorded {
  readonly spans: Array<Tracer.Span>
  readonly lines: Array<{ readonly message: unknown; readonly annotations: Record<string, unknown> }>
}

/** One request through the middleware, with the tracer on or off and the logger at `level`. */
const serve = (options: { readonly traced: boolean; readonly level: LogLevel.LogLevel; readonly status: number }) =>
  Effect.gen(function*() {
    const recorded: Recorded = { spans: [], lines: [] }
    const native = yield* Effect.tracer
    const tracer = Tracer.make({
      span: (...args) => {
        const span = native.span(...args)
        recorded.spans.push(span)
        return span
      },
      context: (f, fiber) => native.context(f, fiber)
    })
    const logger = Logger.make(({ annotations, message }) => {
      recorded.lines.push({ message, annotations: Object.fromEntries(HashMap.toEntries(annotations)) })
    })
    const request = HttpServerRequest.fromWeb(new Request("http://localhost/api/v1/recordings/7?signature=secret"))
    const response = yield* requestTelemetry(HttpServerResponse.text("done", { status: options.status })).pipe(
      Effect.provideService(HttpServerRequest.HttpServerRequest, request),
      Effect.withTracer(tracer),
      Effect.withTracerEnabled(options.traced),
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Logger.withMinimumLogLevel(options.level)
    )
    return { response, ...recorded }
  })

describe("request telemetry", () => {
  it("records a server span with the status and logs one line with the path but not the query", async () => {
    const { lines, response, spans } = await Effect.runPromise(
      serve({ traced: true, level: LogLevel.Info, status: 201 })
    )
    expect(response.status).toBe(201)
    const server = spans.filter((span) => span.name === "http.server GET")
    expect(server).toHaveLength(1)
    expect(server[0]!.attributes.get("url.path")).toBe("/api/v1/recordings/7")
    expect(server[0]!.attributes.get("http.response.status_code")).toBe(201)
    expect(lines).toHaveLength(1)
    expect(lines[0]!.annotations).toMatchObject({
      "http.method": "GET",
      "http.path": "/api/v1/recordings/7",
      "http.status": 201
    })
    expect(JSON.stringify(lines)).not.toContain("secret")
  })

  it("still records the span's status when the log level hides the request's line", async () => {
    const { lines, spans } = await Effect.runPromise(serve({ traced: true, level: LogLevel.Error, status: 204 }))
    expect(lines).toHaveLength(0)
    const server = spans.filter((span) => span.name === "http.server GET")
    expect(server).toHaveLength(1)
    expect(server[0]!.attributes.get("http.response.status_code")).toBe(204)
  })

  it("makes no span with tracing off and still logs the request", async () => {
    const { lines, response, spans } = await Effect.runPromise(
      serve({ traced: false, level: LogLevel.Info, status: 200 })
    )
    expect(response.status).toBe(200)
    expect(spans).toHaveLength(0)
    expect(lines).toHaveLength(1)
    expect(lines[0]!.annotations).toMatchObject({ "http.status": 200 })
  })

  it("answers with nothing recorded when neither a span nor a line is wanted", async () => {
    const { lines, response, spans } = await Effect.runPromise(
      serve({ traced: false, level: LogLevel.Warning, status: 200 })
    )
    expect(response.status).toBe(200)
    expect(spans).toHaveLength(0)
    expect(lines).toHaveLength(0)
  })
})
