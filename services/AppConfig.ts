import { Context, type Option, type Redacted, Schema } from "effect"

/** Everything talkgraph reads from the environment, validated once at start. */
export interface AppConfigShape {
  readonly port: number
  readonly host: string
  readonly publicUrl: string
  readonly dataDir: string
  readonly databaseUrl: Option.Option<Redacted.Redacted>
  readonly storageUrl: string
  readonly secretKey: Option.Option<Redacted.Redacted>
  readonly adminEmail: Option.Option<string>
  readonly adminPassword: Option.Option<Redacted.Redacted>
  readonly signupOpen: boolean
  readonly sessionTtlHours: number
  readonly otlpEndpoint: Option.Option<string>
  readonly logLevel: "debug" | "info" | "warning" | "error"
}

export class AppConfig extends Context.Tag("talkgraph/AppConfig")<AppConfig, AppConfigShape>() {}

/** A configuration value that can never work; the message names the variable. */
export class InvalidConfiguration extends Schema.TaggedError<InvalidConfiguration>()("InvalidConfiguration", {
  message: Schema.String
}) {}
