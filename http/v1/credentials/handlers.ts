import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Credentials } from "../../../services/Credentials.ts"
import { Api } from "../../api.ts"
import { requireRole, requireScope } from "../../security.ts"

const read = requireScope("agents:read")
/** A credential is an organization setting, as the model and telephony settings are: admins change it. */
const write = Effect.zipRight(requireScope("agents:write"), requireRole("admin"))

export const CredentialsHandlers = HttpApiBuilder.group(
  Api,
  "credentials",
  (handlers) =>
    Effect.gen(function*() {
      const credentials = yield* Credentials
      return handlers
        .handle("list", () => Effect.flatMap(read, credentials.list))
        .handle("create", ({ payload }) => Effect.flatMap(write, (principal) => credentials.create(principal, payload)))
        .handle("get", ({ path }) =>
          Effect.flatMap(read, (principal) => credentials.get(principal, path.credential_uuid)))
        .handle(
          "update",
          ({ path, payload }) =>
            Effect.flatMap(write, (principal) =>
              credentials.update(principal, path.credential_uuid, payload))
        )
        .handle(
          "remove",
          ({ path }) =>
            Effect.flatMap(write, (principal) => credentials.remove(principal, path.credential_uuid)).pipe(
              Effect.as({})
            )
        )
    })
)
