import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { bodySchema, IdFromPath, pathSchema } from "../../requestSchemas.ts"

export const TranscriptTurnSchema = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  text: Schema.String,
  node_id: Schema.String,
  at: Schema.String,
  start_ms: Schema.optional(Schema.Number),
  end_ms: Schema.optional(Schema.Number),
  latency_ms: Schema.optional(Schema.Number),
  interrupted: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "TranscriptTurn" })

export const RunUsage = Schema.Struct({
  prompt_tokens: Schema.Number,
  completion_tokens: Schema.Number,
  service_tokens: Schema.Number
}).annotations({ identifier: "RunUsage" })

const Json = Schema.Record({ key: Schema.String, value: Schema.Unknown })

const sessionFields = {
  workflow_run_id: Schema.Number,
  workflow_id: Schema.Number,
  definition_id: Schema.NullOr(Schema.Number),
  version_number: Schema.NullOr(Schema.Number),
  state: Schema.Literal("initialized", "running", "completed", "failed"),
  node_id: Schema.NullOr(Schema.String),
  end_reason: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  transcript: Schema.Array(TranscriptTurnSchema),
  initial_context: Json,
  gathered_context: Json,
  usage: RunUsage,
  created_at: Schema.Date,
  started_at: Schema.NullOr(Schema.Date),
  ended_at: Schema.NullOr(Schema.Date)
}

export const TextChatSessionResponse = Schema.Struct(sessionFields).annotations({ identifier: "TextChatSessionResponse" })

export const TextChatReplyResponse = Schema.Struct({
  ...sessionFields,
  reply: Schema.String.annotations({ description: "What the agent said in this exchange" })
}).annotations({ identifier: "TextChatReplyResponse" })

/**
 * With `Accept: text/event-stream`: `event: token` frames `{"text": …}` as the reply is produced,
 * then one `event: message` frame holding a TextChatReplyResponse (or `event: error` `{status, detail}`).
 */
export const TextChatEventStream = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })
).annotations({ identifier: "TextChatEventStream" })

export const CreateTextChatSessionRequest = bodySchema("CreateTextChatSession", {
  initial_context: Schema.optional(Json),
  use_draft: Schema.optional(Schema.Boolean)
})

export const TextChatMessageRequest = bodySchema("TextChatMessage", {
  text: Schema.String.pipe(
    Schema.filter((text) => text.trim().length > 0, { message: () => "must not be empty" }),
    Schema.maxLength(10_000)
  )
})

export const TextChatWorkflowPath = pathSchema("TextChatWorkflow", { workflow_id: IdFromPath })
export const TextChatSessionPath = pathSchema("TextChatSession", { workflow_id: IdFromPath, run_id: IdFromPath })
