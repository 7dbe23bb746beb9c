import { Schema } from "effect"
import { RunId, WorkflowId } from "../domain/ids.ts"
import { JsonObject, Timestamp } from "../domain/wireTypes.ts"
import { ToolCallTaken } from "./conversationState.ts"
import { TranscriptTurn } from "./transcript.ts"

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
  /** The graph node the conversation is at. */
  node_id: Schema.NullOr(Schema.String),
  end_reason: Schema.NullOr(Schema.String),
  error: Schema.NullOr(Schema.String),
  transcript: Schema.Array(TranscriptTurn),
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

/**
 * A text chat session: its run as the chat API shows it (TextChatSessionResponse). The one
 * definition: ChatSessions' view is its type and the HTTP response its encoding.
 */
export const ChatSession = Schema.Struct(sessionFields).annotations({ identifier: "TextChatSessionResponse" })
export type ChatSession = typeof ChatSession.Type

/** The session after one exchange, with what the agent said in it and the tools it called (TextChatReplyResponse). */
export const ChatReply = Schema.Struct({
  ...sessionFields,
  reply: Schema.String.annotations({ description: "What the agent said in this exchange" }),
  tool_calls: Schema.Array(ToolCallTaken).annotations({
    description: "The tools the agent called in this exchange, in order"
  })
}).annotations({ identifier: "TextChatReplyResponse" })
export type ChatReply = typeof ChatReply.Type
