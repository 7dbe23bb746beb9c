import { Schema } from "effect"
import { JsonValue } from "../domain/wireTypes.ts"
import { EndCallConfig, TransferCallConfig } from "./callToolConfigs.ts"

/**
 * A tool of an organization's library, in Dograh's shape (`/api/v1/tools`): `definition.type`
 * says what it does and `definition.config` how. `current_time` is talkgraph's own.
 */
const optional = <S extends Schema.Schema.Any>(schema: S) => Schema.optionalWith(schema, { exact: true })
const nullable = <S extends Schema.Schema.Any>(schema: S) => optional(Schema.NullOr(schema))

export const ParameterType = Schema.Literal("string", "number", "boolean", "object", "array")
export type ParameterType = typeof ParameterType.Type

const ParameterName = Schema.String.pipe(
  Schema.pattern(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, {
    message: () => "must start with a letter or _ and hold only letters, digits and _ (at most 64)"
  })
)

/** A value the model gives when it calls the tool. */
export const ToolParameter = Schema.Struct({
  name: ParameterName,
  type: ParameterType,
  description: Schema.String.pipe(Schema.maxLength(1000)),
  required: Schema.optionalWith(Schema.Boolean, { default: () => true })
})
export type ToolParameter = typeof ToolParameter.Type

/** A value talkgraph fills in from the conversation's variables (`{{initial_context.phone}}`, `{{budget}}`). */
export const PresetParameter = Schema.Struct({
  name: ParameterName,
  type: ParameterType,
  value_template: Schema.String.pipe(Schema.maxLength(2000)),
  required: Schema.optionalWith(Schema.Boolean, { default: () => true })
})
export type PresetParameter = typeof PresetParameter.Type

export const HttpMethod = Schema.Literal("GET", "POST", "PUT", "PATCH", "DELETE")
export type HttpMethod = typeof HttpMethod.Type

/** The longest a tool's request may take; a voice caller is waiting. */
export const MAX_TOOL_TIMEOUT_MS = 30_000
export const DEFAULT_TOOL_TIMEOUT_MS = 5_000
/** What of an answer goes back to the model at most, by default: a reply the model can still read whole. */
export const DEFAULT_RESULT_CHARS = 4_000

export const HttpApiConfig = Schema.Struct({
  method: Schema.transform(Schema.String, HttpMethod, {
    strict: false,
    decode: (method) => method.toUpperCase(),
    encode: (method) => method
  }),
  url: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000)),
  headers: nullable(Schema.Record({ key: Schema.String, value: Schema.String.pipe(Schema.maxLength(2000)) })),
  credential_uuid: nullable(Schema.String),
  parameters: nullable(Schema.Array(ToolParameter).pipe(Schema.maxItems(50))),
  preset_parameters: nullable(Schema.Array(PresetParameter).pipe(Schema.maxItems(50))),
  timeout_ms: optional(
    Schema.Int.pipe(
      Schema.between(1, MAX_TOOL_TIMEOUT_MS, { message: () => `must be from 1 to ${MAX_TOOL_TIMEOUT_MS} ms` })
    )
  ),
  body_template: nullable(Schema.Record({ key: Schema.String, value: JsonValue })),
  /** talkgraph: the part of a JSON answer the model gets (RFC 6901, e.g. `/order/status`); the whole body when absent. */
  response_pointer: nullable(
    Schema.String.pipe(Schema.pattern(/^(\/[^/]*)*$/, { message: () => "must be a JSON pointer such as /data/0/name" }))
  ),
  /** talkgraph: at most this many characters of the answer reach the model; the rest is cut with a note. */
  max_result_chars: optional(Schema.Int.pipe(Schema.between(100, 100_000))),
  /**
   * talkgraph, voice calls: what the agent says when the request takes longer than a moment, so
   * the caller never hears dead air; absent: "One moment, please."; null or empty: nothing.
   */
  filler_message: nullable(Schema.String.pipe(Schema.maxLength(300))),
  customMessage: nullable(Schema.String),
  customMessageType: nullable(Schema.Literal("text", "audio")),
  customMessageRecordingId: nullable(Schema.String)
})
export type HttpApiConfig = typeof HttpApiConfig.Type

const Passthrough = Schema.Record({ key: Schema.String, value: JsonValue })

export const HttpApiDefinition = Schema.Struct({
  schema_version: optional(Schema.Int),
  type: Schema.Literal("http_api"),
  config: HttpApiConfig
})
export const EndCallDefinition = Schema.Struct({
  schema_version: optional(Schema.Int),
  type: Schema.Literal("end_call"),
  config: Schema.optionalWith(EndCallConfig, { default: () => ({}) })
})
export const TransferCallDefinition = Schema.Struct({
  schema_version: optional(Schema.Int),
  type: Schema.Literal("transfer_call"),
  config: Schema.optionalWith(TransferCallConfig, { default: () => ({}) })
})
export const CalculatorDefinition = Schema.Struct({
  schema_version: optional(Schema.Int),
  type: Schema.Literal("calculator"),
  config: Schema.optionalWith(Passthrough, { default: () => ({}) })
})
export const CurrentTimeDefinition = Schema.Struct({
  schema_version: optional(Schema.Int),
  type: Schema.Literal("current_time"),
  config: Schema.optionalWith(
    Schema.Struct({ timezone: optional(Schema.String.pipe(Schema.maxLength(100))) }),
    { default: () => ({}) }
  )
})

/** The agent presses keys on the call (played as DTMF tones): voice calls only. */
export const SendDtmfDefinition = Schema.Struct({
  schema_version: optional(Schema.Int),
  type: Schema.Literal("send_dtmf"),
  config: Schema.optionalWith(Passthrough, { default: () => ({}) })
})

/** A tool of an MCP server, as its catalog lists it (`tools/list`). */
export const McpDiscoveredTool = Schema.Struct({
  name: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(200)),
  description: nullable(Schema.String),
  inputSchema: optional(Schema.Record({ key: Schema.String, value: JsonValue })),
  /** MCP's `annotations.readOnlyHint`: a tool that only reads may be cut off when the caller speaks. */
  read_only: optional(Schema.Boolean)
})
export type McpDiscoveredTool = typeof McpDiscoveredTool.Type

/** Dograh's default wait for an MCP server, cut to what a caller can bear. */
export const DEFAULT_MCP_TIMEOUT_MS = 10_000

export const McpConfig = Schema.Struct({
  /** `streamable_http` (MCP 2025-03-26 and later) or the older HTTP+SSE transport. */
  transport: Schema.optionalWith(Schema.Literal("streamable_http", "sse"), {
    default: () => "streamable_http" as const
  }),
  url: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(2000)),
  credential_uuid: nullable(Schema.String),
  /** Dograh: the server's tools offered to the model; empty or absent offers them all. */
  tools_filter: optional(Schema.Array(Schema.String.pipe(Schema.maxLength(200))).pipe(Schema.maxItems(200))),
  /** Dograh's wait in seconds; `timeout_ms` wins when both are given. */
  timeout_secs: optional(Schema.Int.pipe(Schema.between(0, 300))),
  sse_read_timeout_secs: optional(Schema.Int.pipe(Schema.nonNegative())),
  timeout_ms: optional(
    Schema.Int.pipe(
      Schema.between(1, MAX_TOOL_TIMEOUT_MS, { message: () => `must be from 1 to ${MAX_TOOL_TIMEOUT_MS} ms` })
    )
  ),
  max_result_chars: optional(Schema.Int.pipe(Schema.between(100, 100_000))),
  filler_message: nullable(Schema.String.pipe(Schema.maxLength(300))),
  /** The server's catalog as last fetched (on save, test or refresh); talkgraph keeps it, clients need not send it. */
  discovered_tools: optional(Schema.Array(McpDiscoveredTool).pipe(Schema.maxItems(500)))
})
export type McpConfig = typeof McpConfig.Type

export const McpDefinition = Schema.Struct({
  schema_version: optional(Schema.Int),
  type: Schema.Literal("mcp"),
  config: McpConfig
})

/** How long one exchange with an MCP server may take. */
export const mcpTimeoutMs = (config: McpConfig): number =>
  config.timeout_ms ??
    (config.timeout_secs !== undefined && config.timeout_secs > 0
      ? Math.min(config.timeout_secs * 1000, MAX_TOOL_TIMEOUT_MS)
      : DEFAULT_MCP_TIMEOUT_MS)

export const ToolDefinition = Schema.Union(
  HttpApiDefinition,
  McpDefinition,
  EndCallDefinition,
  TransferCallDefinition,
  CalculatorDefinition,
  CurrentTimeDefinition,
  SendDtmfDefinition
)
export type ToolDefinition = typeof ToolDefinition.Type

export const ToolType = Schema.Literal(
  "http_api",
  "mcp",
  "end_call",
  "transfer_call",
  "calculator",
  "current_time",
  "send_dtmf"
)
export type ToolType = typeof ToolType.Type

export const ToolStatus = Schema.Literal("active", "archived")
export type ToolStatus = typeof ToolStatus.Type

/** What a slow HTTP tool's call is covered with in a voice call, unless its definition says otherwise. */
export const DEFAULT_FILLER_MESSAGE = "One moment, please."

/** The line a voice call says while this tool's request runs, or null for none. */
export const fillerOf = (definition: ToolDefinition): string | null => {
  if (definition.type === "transfer_call") {
    // Dograh's resolver `wait_message`: said while the resolver (then the carrier) is waited for.
    const wait = definition.config.destination_source === "dynamic" ? definition.config.resolver?.wait_message : null
    return wait ? wait.trim() || null : null
  }
  if (definition.type !== "http_api" && definition.type !== "mcp") return null
  const filler = definition.config.filler_message
  if (filler === undefined) return DEFAULT_FILLER_MESSAGE
  return filler === null || filler.trim() === "" ? null : filler.trim()
}

/** Whether a time zone name is one this runtime knows (IANA names such as Europe/Paris). */
export const isTimeZone = (zone: string): boolean => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone })
    return true
  } catch {
    return false
  }
}
