import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ApiKeys } from "../../../services/ApiKeys.ts"
import { Api } from "../../api.ts"
import { requireSession } from "../../security.ts"

export const ApiKeysHandlers = HttpApiBuilder.group(Api, "apiKeys", (handlers) =>
  Effect.gen(function* () {
    const apiKeys = yield* ApiKeys
    return handlers
      .handle("create", ({ payload }) =>
        requireSession.pipe(Effect.flatMap((principal) => apiKeys.create(principal, payload))))
      .handle("list", ({ urlParams }) =>
        requireSession.pipe(Effect.flatMap((principal) => apiKeys.list(principal, { includeArchived: urlParams.include_archived }))))
      .handle("revoke", ({ path }) => requireSession.pipe(Effect.flatMap((principal) => apiKeys.revoke(principal, path.id))))
      .handle("reactivate", ({ path }) =>
        requireSession.pipe(Effect.flatMap((principal) => apiKeys.reactivate(principal, path.id))))
  }))
