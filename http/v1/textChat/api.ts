import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
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
  .add(
    HttpApiEndpoint.post("create", "/:workflow_id/text-chat/sessions")
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
      .setPath(TextChatSessionPath)
      .addSuccess(TextChatSessionResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("sendMessage", "/:workflow_id/text-chat/sessions/:run_id/messages")
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
      .setPath(TextChatSessionPath)
      .addSuccess(TextChatSessionResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/workflow")
