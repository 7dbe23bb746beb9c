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
      .handle("list", () => requireSession.pipe(Effect.flatMap(apiKeys.list)))
      .handle("revoke", ({ path }) => requireSession.pipe(Effect.flatMap((principal) => apiKeys.revoke(principal, path.id))))
      .handle("reactivate", ({ path }) =>
        requireSession.pipe(Effect.flatMap((principal) => apiKeys.reactivate(principal, path.id))))
  }))
