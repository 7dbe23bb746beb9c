import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Identity } from "../../../services/Identity.ts"
import { Api } from "../../api.ts"
import { CurrentPrincipal, requireSession } from "../../security.ts"

const sessionToEnd = requireSession(
  "Logout ends a session token; an API key stays valid until it is revoked with DELETE /api/v1/user/api-keys/{id}"
)

export const AuthHandlers = HttpApiBuilder.group(Api, "auth", (handlers) =>
  Effect.gen(function*() {
    const identity = yield* Identity
    return handlers
      .handle("login", ({ payload }) => identity.login(payload.email, payload.password))
      .handle("signup", ({ payload }) => identity.signup(payload))
      .handle("logout", () => sessionToEnd.pipe(Effect.flatMap(identity.logout), Effect.as({})))
      .handle("me", () => CurrentPrincipal.pipe(Effect.flatMap(identity.me)))
  }))
