import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Conversations } from "../../../services/Conversations.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"
import { pagination } from "../envelopes.ts"

export const ConversationsHandlers = HttpApiBuilder.group(Api, "conversations", (handlers) =>
  Effect.gen(function*() {
    const conversations = yield* Conversations
    const reader = requireScope("conversations:read")
    return handlers
      .handle("listForAgent", ({ path, urlParams }) =>
        Effect.flatMap(reader, (principal) =>
          conversations.listForAgent(principal, path.agent_id, urlParams.page, urlParams.page_size)).pipe(
            Effect.map(({ items, total }) => ({
              data: items,
              pagination: pagination(urlParams.page, urlParams.page_size, total)
            }))
          ))
      .handle("get", ({ path }) =>
        Effect.flatMap(reader, (principal) =>
          conversations.get(principal, path.conversation_id)).pipe(Effect.map((data) => ({ data }))))
  }))
