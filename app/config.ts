import { Config, ConfigError, Effect, Either, Layer, Option, Redacted } from "effect"
import * as path from "node:path"
import { AppConfig, type AppConfigShape, InvalidConfiguration } from "../services/AppConfig.ts"
import { emailProblem, passwordProblem } from "../src/identity/credentials.ts"

const validUrl = (name: string) =>
  Config.string(name).pipe(
    Config.validate({
      message: "must be an absolute http(s) URL such as https://talkgraph.example.com",
      validation: (value) => {
        try {
          const url = new URL(value)
          return url.protocol === "http:" || url.protocol === "https:"
        } catch {
          return false
        }
      }
    })
  )

const storageUrl = (dataDir: string) =>
  Config.string("STORAGE_URL").pipe(
    Config.validate({
      message: "must be file:///absolute/path or s3://bucket[/prefix]",
      validation: (value) => /^file:\/\/\//.test(value) || /^s3:\/\/[a-z0-9][a-z0-9.-]{1,62}(\/.*)?$/.test(value)
    }),
    Config.withDefault(`file://${path.resolve(dataDir, "storage")}`)
  )

const postgresUrl = Config.redacted("DATABASE_URL").pipe(
  Config.validate({
    message: "DATABASE_URL must be a postgres:// or postgresql:// connection URL",
    validation: (value) => /^postgres(ql)?:\/\//.test(Redacted.value(value))
  }),
  Config.option
)

const secretKey = Config.redacted("TALKGRAPH_SECRET_KEY").pipe(
  Config.validate({
    message: "TALKGRAPH_SECRET_KEY must be at least 32 characters (for example: openssl rand -hex 32)",
    validation: (value) => Redacted.value(value).length >= 32
  }),
  Config.option
)

const config = Effect.gen(function*() {
  const port = yield* Config.port("PORT").pipe(Config.withDefault(8000))
  const host = yield* Config.string("HOST").pipe(Config.withDefault("127.0.0.1"))
  const dataDir = path.resolve(yield* Config.string("TALKGRAPH_DATA_DIR").pipe(Config.withDefault(".talkgraph")))
  const databaseUrl = yield* postgresUrl
  const key = yield* secretKey
  if (Option.isSome(databaseUrl) && Option.isNone(key)) {
    return yield* Effect.fail(
      ConfigError.MissingData(
        ["TALKGRAPH_SECRET_KEY"],
        "is required with DATABASE_URL, so every process signs and encrypts with the same key"
      )
    )
  }
  const adminEmail = yield* Config.string("TALKGRAPH_ADMIN_EMAIL").pipe(
    Config.validate({ message: "must be an email address", validation: (value) => emailProblem(value) === undefined }),
    Config.option
  )
  const adminPassword = yield* Config.redacted("TALKGRAPH_ADMIN_PASSWORD").pipe(
    Config.mapOrFail((value) => {
      const problem = passwordProblem(Redacted.value(value))
      return problem
        ? Either.left(ConfigError.InvalidData([], `TALKGRAPH_ADMIN_PASSWORD ${problem}`))
        : Either.right(value)
    }),
    Config.option
  )
  const shape: AppConfigShape = {
    port,
    host,
    publicUrl: (yield* validUrl("PUBLIC_URL").pipe(Config.withDefault(`http://${host}:${port}`))).replace(/\/+$/, ""),
    dataDir,
    databaseUrl,
    storageUrl: yield* storageUrl(dataDir),
    secretKey: key,
    adminEmail,
    adminPassword,
    signupOpen: yield* Config.boolean("TALKGRAPH_SIGNUP").pipe(Config.withDefault(false)),
    sessionTtlHours: yield* Config.integer("TALKGRAPH_SESSION_TTL_HOURS").pipe(
      Config.validate({ message: "must be between 1 and 720", validation: (hours) => hours >= 1 && hours <= 720 }),
      Config.withDefault(24)
    ),
    otlpEndpoint: yield* Config.string("OTEL_EXPORTER_OTLP_ENDPOINT").pipe(Config.option),
    logLevel: yield* Config.literal("debug", "info", "warning", "error")("LOG_LEVEL").pipe(
      Config.withDefault("info" as const)
    )
  }
  return shape
})

/** Reads the configuration; a bad value fails with a message naming the variable. */
export const AppConfigLive = Layer.effect(
  AppConfig,
  config.pipe(
    Effect.mapError((error) => new InvalidConfiguration({ message: `Invalid configuration: ${String(error)}` }))
  )
)
