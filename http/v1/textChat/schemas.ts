import { HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { ChatReply, ChatSession } from "../../../src/conversation/chatSessionRecord.ts"
import { JsonObject } from "../../../src/domain/wireTypes.ts"
import { bodySchema, IdFromPath, pathSchema } from "../../requestSchemas.ts"

/** A session and a reply are defined once, in src/conversation/chatSessionRecord.ts. */
export const TextChatSessionResponse = ChatSession
export const TextChatReplyResponse = ChatReply

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
