import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { RunId, WorkflowId } from "../../../src/domain/ids.ts"
import { JsonObject, Timestamp, TimestampText } from "../../../src/domain/wireTypes.ts"
import { bodySchema, IdFromPath, pathSchema } from "../../requestSchemas.ts"

export const TranscriptTurnSchema = Schema.Struct({
  role: Schema.Literal("user", "assistant"),
  text: Schema.String,
  node_id: Schema.String,
  at: TimestampText,
  start_ms: Schema.optional(Schema.Number),
  end_ms: Schema.optional(Schema.Number),
  latency_ms: Schema.optional(Schema.Number),
  interrupted: Schema.optional(Schema.Boolean)
}).annotations({ identifier: "TranscriptTurn" })

export const RunUsage = Schema.Struct({
  prompt_tokens: Schema.Int,
  completion_tokens: Schema.Int,
  service_tokens: Schema.Int
}).annotations({ identifier: "RunUsage" })

const sessionFields = {
  workflow_run_id: RunId,
  workflow_id: WorkflowId,
  definition_id: Schema.NullOr(Schema.Int),
  version_number: Schema.NullOr(Schema.Int),
  state: Schema.Literal("initialized", "running", "completed", "failed"),
  node_id: Schema.NullOr(Schema.String),
  end_reason: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  transcript: Schema.Array(TranscriptTurnSchema),
  initial_context: JsonObject,
  gathered_context: JsonObject,
  extracted_variables: JsonObject.annotations({
    description:
      "The variables extracted so far, as the conversation goes on (gathered_context is settled when it ends)"
  }),
  usage: RunUsage,
  created_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  ended_at: Schema.NullOr(Timestamp)
}

export const TextChatSessionResponse = Schema.Struct(sessionFields).annotations({
  identifier: "TextChatSessionResponse"
})

export const ToolCallTakenSchema = Schema.Struct({
  name: Schema.String.annotations({ description: "The tool: an edge's transition, or end_call" }),
  from_node_id: Schema.String,
  edge_id: Schema.NullOr(Schema.String).annotations({ description: "The edge followed; null for end_call" }),
  to_node_id: Schema.NullOr(Schema.String)
}).annotations({ identifier: "ToolCallTaken" })

export const TextChatReplyResponse = Schema.Struct({
  ...sessionFields,
  reply: Schema.String.annotations({ description: "What the agent said in this exchange" }),
  tool_calls: Schema.Array(ToolCallTakenSchema).annotations({
    description: "The tools the agent called in this exchange, in order"
  })
}).annotations({ identifier: "TextChatReplyResponse" })

/**
 * With `Accept: text/event-stream`: `event: token` frames `{"text": …}` as the reply is produced,
 * then one `event: message` frame holding a TextChatReplyResponse (or `event: error` `{status, detail}`).
 */
export const TextChatEventStream = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })
).annotations({ identifier: "TextChatEventStream" })

export const CreateTextChatSessionRequest = bodySchema("CreateTextChatSession", {
  initial_context: Schema.optional(JsonObject),
  use_draft: Schema.optional(Schema.Boolean)
})

export const TextChatMessageRequest = bodySchema("TextChatMessage", {
  text: Schema.String.pipe(
    Schema.filter((text) => text.trim().length > 0, { message: () => "must not be empty" }),
    Schema.maxLength(10_000)
  )
})

const WorkflowIdFromPath = IdFromPath.pipe(Schema.brand("WorkflowId"))

export const TextChatWorkflowPath = pathSchema("TextChatWorkflow", { workflow_id: WorkflowIdFromPath })
export const TextChatSessionPath = pathSchema("TextChatSession", {
  workflow_id: WorkflowIdFromPath,
  run_id: IdFromPath.pipe(Schema.brand("RunId"))
})
