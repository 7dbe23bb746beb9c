import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { ModelChecks } from "../../../services/ModelChecks.ts"
import { ModelSettings } from "../../../services/ModelSettings.ts"
import { Api } from "../../api.ts"
import { requireRole, requireScope } from "../../security.ts"

export const ModelConfigurationsHandlers = HttpApiBuilder.group(
  Api,
  "modelConfigurations",
  (handlers) =>
    Effect.gen(function*() {
      const settings = yield* ModelSettings
      const checks = yield* ModelChecks
      return handlers
        .handle("get", () => Effect.flatMap(requireScope("agents:read"), settings.get))
        .handle(
          "put",
          ({ payload }) =>
            Effect.flatMap(Effect.zipRight(requireScope("agents:write"), requireRole("admin")), (principal) =>
              settings.put(principal, payload))
        )
        .handle(
          "test",
          ({ payload }) =>
            Effect.flatMap(Effect.zipRight(requireScope("agents:write"), requireRole("admin")), (principal) =>
              checks.check(principal, payload.kind))
        )
    })
)
