import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { TelephonyConfigs } from "../../../services/TelephonyConfigs.ts"
import { Forbidden } from "../../../src/domain/errors.ts"
import { hasScope } from "../../../src/domain/principal.ts"
import { Api } from "../../api.ts"
import { CurrentPrincipal, requireRole, requireScope } from "../../security.ts"

const write = Effect.zipRight(requireScope("telephony:write"), requireRole("admin"))

/** Reading configurations (secrets masked) is also open to keys that manage campaigns, which must pick one. */
const read = Effect.flatMap(
  CurrentPrincipal,
  (principal) =>
    hasScope(principal, "telephony:write") || hasScope(principal, "campaigns:read")
      ? Effect.succeed(principal)
      : Effect.fail(
        new Forbidden({ message: "This API key lacks the \"telephony:write\" or \"campaigns:read\" scope" })
      )
)

export const TelephonyConfigsHandlers = HttpApiBuilder.group(
  Api,
  "telephonyConfigs",
  (handlers) =>
    Effect.gen(function*() {
      const configs = yield* TelephonyConfigs
      return handlers
        .handle(
          "list",
          () =>
            Effect.flatMap(read, (principal) =>
              Effect.map(configs.list(principal), (configurations) => ({ configurations })))
        )
        .handle("create", ({ payload }) =>
          Effect.flatMap(write, (principal) => configs.create(principal, payload)))
        .handle("get", ({ path }) => Effect.flatMap(read, (principal) => configs.get(principal, path.config_id)))
        .handle(
          "update",
          ({ path, payload }) =>
            Effect.flatMap(write, (principal) => configs.update(principal, path.config_id, payload))
        )
        .handle(
          "remove",
          ({ path }) =>
            Effect.flatMap(write, (principal) => configs.remove(principal, path.config_id)).pipe(Effect.as({}))
        )
        .handle(
          "listNumbers",
          ({ path }) =>
            Effect.flatMap(read, (principal) =>
              Effect.map(configs.listNumbers(principal, path.config_id), (phone_numbers) => ({ phone_numbers })))
        )
        .handle(
          "addNumber",
          ({ path, payload }) =>
            Effect.flatMap(write, (principal) =>
              configs.addNumber(principal, path.config_id, payload))
        )
        .handle(
          "updateNumber",
          ({ path, payload }) =>
            Effect.flatMap(write, (principal) =>
              configs.updateNumber(principal, path.config_id, path.number_id, payload))
        )
        .handle(
          "removeNumber",
          ({ path }) =>
            Effect.flatMap(write, (principal) => configs.removeNumber(principal, path.config_id, path.number_id)).pipe(
              Effect.as({})
            )
        )
    })
)
