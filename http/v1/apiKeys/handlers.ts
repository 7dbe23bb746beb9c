import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ApiKeys } from "../../../services/ApiKeys.ts"
import { Api } from "../../api.ts"
import { requireSession } from "../../security.ts"

const signedIn = requireSession("Managing API keys requires a session token from /api/v1/auth/login")

export const ApiKeysHandlers = HttpApiBuilder.group(Api, "apiKeys", (handlers) =>
  Effect.gen(function*() {
    const apiKeys = yield* ApiKeys
    return handlers
      .handle(
        "create",
        ({ payload }) => signedIn.pipe(Effect.flatMap((principal) => apiKeys.create(principal, payload)))
      )
      .handle("list", ({ urlParams }) =>
        signedIn.pipe(
          Effect.flatMap((principal) => apiKeys.list(principal, { includeArchived: urlParams.include_archived }))
        ))
      .handle("revoke", ({ path }) => signedIn.pipe(Effect.flatMap((principal) => apiKeys.revoke(principal, path.id))))
      .handle("reactivate", ({ path }) =>
        signedIn.pipe(Effect.flatMap((principal) => apiKeys.reactivate(principal, path.id))))
  }))
