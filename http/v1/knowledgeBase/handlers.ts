import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { KnowledgeBase } from "../../../services/KnowledgeBase.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

const read = requireScope("knowledge:read")
const write = requireScope("knowledge:write")

export const KnowledgeBaseHandlers = HttpApiBuilder.group(Api, "knowledgeBase", (handlers) =>
  Effect.gen(function*() {
    const knowledge = yield* KnowledgeBase
    return handlers
      .handle(
        "uploadUrl",
        ({ payload }) => Effect.flatMap(write, (principal) => knowledge.uploadUrl(principal, payload))
      )
      .handle("process", ({ payload }) => Effect.flatMap(write, (principal) => knowledge.process(principal, payload)))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(read, (principal) =>
          Effect.map(knowledge.list(principal, urlParams), (page) => ({
            ...page,
            limit: urlParams.limit,
            offset: urlParams.offset
          }))))
      .handle("get", ({ path }) =>
        Effect.flatMap(read, (principal) =>
          knowledge.get(principal, path.document_uuid)))
      .handle("remove", ({ path }) =>
        Effect.flatMap(write, (principal) =>
          knowledge.remove(principal, path.document_uuid)).pipe(
            Effect.as({ success: true as const, message: "Document deleted successfully" })
          ))
      .handle("reindex", ({ path }) =>
        Effect.flatMap(write, (principal) =>
          knowledge.reindex(principal, path.document_uuid)))
      .handle("search", ({ payload }) =>
        Effect.flatMap(read, (principal) =>
          knowledge.search(principal.organizationId, payload)))
  }))
