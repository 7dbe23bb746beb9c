import { HttpApiBuilder, HttpServerRequest } from "@effect/platform"
import { Effect } from "effect"
import { ChatSessions } from "../../../services/ChatSessions.ts"
import type { Emit } from "../../../services/ConversationEngine.ts"
import type { RunId, WorkflowId } from "../../../src/domain/ids.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"
import { eventStreamOf, wantsEventStream } from "./eventStream.ts"

const silent = () => Effect.void

// Every answer here carries the session's transcript: reading one is reading a conversation.
const reader = requireScope("conversations:read")
const talker = requireScope("agents:write", "conversations:read")

const sessionRef = (path: { readonly workflow_id: WorkflowId; readonly run_id: RunId }) => ({
  workflowId: path.workflow_id,
  runId: path.run_id
})

export const TextChatHandlers = HttpApiBuilder.group(Api, "textChat", (handlers) =>
  Effect.gen(function*() {
    const sessions = yield* ChatSessions
    return handlers
      .handle("create", ({ path, payload }) =>
        talker.pipe(Effect.flatMap((principal) =>
          sessions.create(principal, path.workflow_id, payload, silent)
        )))
      .handle(
        "get",
        ({ path }) => reader.pipe(Effect.flatMap((principal) => sessions.get(principal, sessionRef(path))))
      )
      .handle("sendMessage", ({ path, payload }) =>
        Effect.gen(function*() {
          const principal = yield* talker
          const request = yield* HttpServerRequest.HttpServerRequest
          const reply = (emit: Emit) => sessions.send(principal, sessionRef(path), payload.text, emit)
          return wantsEventStream(request.headers["accept"]) ? yield* eventStreamOf(reply) : yield* reply(silent)
        }))
      .handle(
        "end",
        ({ path }) => talker.pipe(Effect.flatMap((principal) => sessions.end(principal, sessionRef(path))))
      )
  }))
