import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Api } from "../../api.ts"

export const HealthHandlers = HttpApiBuilder.group(
  Api,
  "health",
  (handlers) => handlers.handle("health", () => Effect.succeed({ status: "ok" as const }))
)
