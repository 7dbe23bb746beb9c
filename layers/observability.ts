import { FetchHttpClient } from "@effect/platform"
import { Effect, Layer, Logger, LogLevel, Option } from "effect"
import { AppConfig } from "../services/AppConfig.ts"
import { serviceVersion } from "../src/version.ts"

const levels = {
  debug: LogLevel.Debug,
  info: LogLevel.Info,
  warning: LogLevel.Warning,
  error: LogLevel.Error
} as const

/**
 * JSON log lines (one object per line, with spans and annotations) at LOG_LEVEL; spans, logs and
 * metrics are exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.
 */
export const ObservabilityLive = Layer.unwrapEffect(
  Effect.gen(function*() {
    const config = yield* AppConfig
    // `Logger.jsonLogger` only formats a line; `Logger.json` is that logger writing to stdout.
    const logging = Layer.merge(Logger.json, Logger.minimumLogLevel(levels[config.logLevel]))
    if (Option.isNone(config.otlpEndpoint)) return logging
    // The exporter is loaded only when it is configured: its OpenTelemetry modules cost ~0.2 s of start-up.
    const { Otlp } = yield* Effect.promise(() => import("@effect/opentelemetry"))
    const otlp = Otlp.layerJson({
      baseUrl: config.otlpEndpoint.value,
      resource: { serviceName: "talkgraph", serviceVersion }
    }).pipe(Layer.provide(FetchHttpClient.layer))
    return Layer.merge(logging, otlp)
  })
)
