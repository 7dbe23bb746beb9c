import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { KnowledgeBase } from "../../../services/KnowledgeBase.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"
import { pagination } from "../envelopes.ts"

const data = <A>(value: A) => ({ data: value })

export const V2KnowledgeBaseHandlers = HttpApiBuilder.group(
  Api,
  "v2knowledgeBase",
  (handlers) =>
    Effect.gen(function*() {
      const knowledge = yield* KnowledgeBase
      const read = requireScope("knowledge:read")
      return handlers
        .handle("knowledgeBases", () =>
          Effect.flatMap(read, (principal) => knowledge.summary(principal)).pipe(
            Effect.map((summary) => ({ data: [summary], pagination: pagination(1, 1, 1) }))
          ))
        .handle("list", ({ urlParams }) =>
          Effect.flatMap(read, (principal) =>
            knowledge.list(principal, {
              status: urlParams.status,
              limit: urlParams.page_size,
              offset: (urlParams.page - 1) * urlParams.page_size
            })).pipe(
              Effect.map((page) => ({
                data: page.documents,
                pagination: pagination(urlParams.page, urlParams.page_size, page.total)
              }))
            ))
        .handle(
          "get",
          ({ path }) =>
            Effect.flatMap(read, (principal) => knowledge.get(principal, path.document_uuid)).pipe(Effect.map(data))
        )
        .handle(
          "search",
          ({ payload }) =>
            Effect.flatMap(read, (principal) => knowledge.search(principal.organizationId, payload)).pipe(
              Effect.map(data)
            )
        )
    })
)
