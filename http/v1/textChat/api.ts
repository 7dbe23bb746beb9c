import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpUpstreamFailed, HttpValidationFailed } from "../../errors.ts"
import { V1Auth } from "../../security.ts"
import {
  CreateTextChatSessionRequest,
  TextChatEventStream,
  TextChatMessageRequest,
  TextChatReplyResponse,
  TextChatSessionPath,
  TextChatSessionResponse,
  TextChatWorkflowPath
} from "./schemas.ts"

/**
 * Text chat with an agent (paths of the established platform). Every answer carries the session's
 * transcript, so reading a session needs `conversations:read`, and starting, messaging and ending
 * one need `agents:write` and `conversations:read`.
 */
export const TextChatApi = HttpApiGroup.make("textChat")
  .annotate(
    OpenApi.Description,
    "Text chat with an agent. Starting, messaging and ending a session need `agents:write`; reading one needs `agents:read`."
  )
  .add(
    HttpApiEndpoint.post("create", "/:workflow_id/text-chat/sessions")
      .annotate(OpenApi.Summary, "Start a chat session")
      .annotate(
        OpenApi.Description,
        "Starts a run of the workflow's published version (`use_draft: true` runs the draft) and answers with the agent's greeting."
      )
      .setPath(TextChatWorkflowPath)
      .setPayload(CreateTextChatSessionRequest)
      .addSuccess(TextChatReplyResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
      .addError(HttpUpstreamFailed)
  )
  .add(
    HttpApiEndpoint.get("get", "/:workflow_id/text-chat/sessions/:run_id")
      .annotate(OpenApi.Summary, "Get a chat session")
      .annotate(OpenApi.Description, "The session's state, transcript, contexts and usage.")
      .setPath(TextChatSessionPath)
      .addSuccess(TextChatSessionResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("sendMessage", "/:workflow_id/text-chat/sessions/:run_id/messages")
      .annotate(OpenApi.Summary, "Send a chat message")
      .annotate(
        OpenApi.Description,
        "Sends the user's message and answers with the agent's reply, as JSON or, with `Accept: text/event-stream`, token by token as server-sent events. A session answers one message at a time (409 while busy); a model failure ends the run and answers 502."
      )
      .setPath(TextChatSessionPath)
      .setPayload(TextChatMessageRequest)
      .addSuccess(TextChatReplyResponse)
      .addSuccess(TextChatEventStream)
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .addError(HttpUpstreamFailed)
  )
  .add(
    HttpApiEndpoint.post("end", "/:workflow_id/text-chat/sessions/:run_id/end")
      .annotate(OpenApi.Summary, "End a chat session")
      .annotate(OpenApi.Description, "Ends the session with `end_reason` `user_ended`. 409 when it has already ended.")
      .setPath(TextChatSessionPath)
      .addSuccess(TextChatSessionResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/workflow")
