import { Schema } from "effect"

/**
 * Dograh's configurations of its call-control tools (`end_call`, `transfer_call`), checked when a
 * tool is saved so an agent moved from Dograh brings them whole. Transferring is carried out by
 * the calls work; these are the definitions it reads.
 */
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const nullable = <S extends Schema.Schema.Any>(schema: S) => optional(Schema.NullOr(schema))

const MessageType = Schema.Literal("none", "custom", "audio")

const NonBlank = (max: number) =>
  Schema.String.pipe(
    Schema.filter((value) => value.trim() !== "" || "must not be blank"),
    Schema.maxLength(max)
  )

export const EndCallConfig = Schema.Struct({
  /** The goodbye said before hanging up: none, `customMessage`, or the clip `audioRecordingId`. */
  messageType: optional(MessageType),
  customMessage: nullable(Schema.String.pipe(Schema.maxLength(2000))),
  audioRecordingId: nullable(Schema.String.pipe(Schema.maxLength(100))),
  /** The model must give a reason, which becomes the call's disposition. */
  endCallReason: optional(Schema.Boolean),
  endCallReasonDescription: nullable(Schema.String.pipe(Schema.maxLength(1000)))
})

const ModelParameter = Schema.Struct({
  name: Schema.String.pipe(Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/)),
  type: Schema.Literal("string", "number", "boolean", "object", "array"),
  description: Schema.String.pipe(Schema.maxLength(1000)),
  required: optional(Schema.Boolean)
})

const HttpResolver = Schema.Struct({
  type: optional(Schema.Literal("http")),
  url: Schema.String.pipe(
    Schema.maxLength(2000),
    Schema.filter((url) => /^https?:\/\//.test(url) || "must be an http(s) URL")
  ),
  headers: nullable(Schema.Record({ key: Schema.String, value: Schema.String.pipe(Schema.maxLength(2000)) })),
  credential_uuid: nullable(Schema.String),
  timeout_ms: optional(Schema.Int.pipe(Schema.between(500, 5000))),
  wait_message: nullable(Schema.String.pipe(Schema.maxLength(300))),
  parameters: nullable(Schema.Array(ModelParameter).pipe(Schema.maxItems(50)))
})

const ContextRoute = Schema.Struct({ context_value: NonBlank(255), destination: NonBlank(255) })

const ContextRule = Schema.Struct({
  context_path: NonBlank(255),
  routes: Schema.Array(ContextRoute).pipe(
    Schema.minItems(1),
    Schema.maxItems(100),
    Schema.filter((routes) =>
      new Set(routes.map((route) => route.context_value.trim().toLowerCase())).size === routes.length ||
      "context mapping values must be unique"
    )
  )
})

const ContextMapping = Schema.Struct({
  rules: Schema.Array(ContextRule).pipe(Schema.minItems(1), Schema.maxItems(20)),
  fallback_destination: nullable(Schema.String.pipe(Schema.maxLength(255)))
})

/** One of several places a transfer may go, which the model picks by `name`. */
const NamedDestination = Schema.Struct({
  name: Schema.String.pipe(
    Schema.pattern(/^[A-Za-z0-9_ -]{1,64}$/, { message: () => "must be 1 to 64 letters, digits, spaces, - or _" })
  ),
  destination: NonBlank(255),
  description: optional(Schema.String.pipe(Schema.maxLength(500)))
})

export const TransferCallConfig = Schema.Struct({
  /** `static`: `destination` (a number, SIP endpoint or template); `dynamic`: asked of `resolver`; `context_mapping`: by rules. */
  destination_source: optional(Schema.Literal("static", "dynamic", "context_mapping")),
  destination: optional(Schema.String.pipe(Schema.maxLength(255))),
  /** Static destinations to choose from: the model is offered their names and picks one. */
  destinations: optional(
    Schema.Array(NamedDestination).pipe(
      Schema.minItems(1),
      Schema.maxItems(20),
      Schema.filter((entries) =>
        new Set(entries.map((entry) => entry.name.toLowerCase())).size === entries.length ||
        "destination names must be unique"
      )
    )
  ),
  messageType: optional(MessageType),
  customMessage: nullable(Schema.String.pipe(Schema.maxLength(2000))),
  audioRecordingId: nullable(Schema.String.pipe(Schema.maxLength(100))),
  /** Seconds to wait for the destination to answer. */
  timeout: optional(Schema.Int.pipe(Schema.between(5, 120))),
  /**
   * `cold` (the default): the carrier hands the caller over. `warm`: the agent keeps the caller while
   * the destination is rung and briefed (`whisper_message`), and joins them only once it answered.
   */
  transfer_type: optional(Schema.Literal("cold", "warm")),
  /** What the destination hears before it is joined (variables filled); absent: a summary of the conversation. */
  whisper_message: nullable(Schema.String.pipe(Schema.maxLength(1000))),
  parameters: nullable(Schema.Array(ModelParameter).pipe(Schema.maxItems(50))),
  resolver: nullable(HttpResolver),
  context_mapping: nullable(ContextMapping)
}).pipe(
  Schema.filter((config) => {
    const source = config.destination_source ?? "static"
    if (source === "dynamic" && !config.resolver) return "resolver is required when destination_source is dynamic"
    if (source === "context_mapping" && !config.context_mapping) {
      return "context_mapping is required when destination_source is context_mapping"
    }
    return true
  })
)
export type TransferCallConfig = typeof TransferCallConfig.Type
