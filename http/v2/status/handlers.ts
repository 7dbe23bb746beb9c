import { HttpApiBuilder } from "@effect/platform"
import { Clock, Effect } from "effect"
import { serviceVersion } from "../../../src/version.ts"
import { Api } from "../../api.ts"

/** Liveness only: it does not touch providers, storage or call readiness (spec "Check API liveness"). */
export const StatusHandlers = HttpApiBuilder.group(
  Api,
  "status",
  (handlers) =>
    handlers.handle("status", () =>
      Clock.currentTimeMillis.pipe(
        Effect.map((now) => ({ data: { status: "ok" as const, version: serviceVersion, time: new Date(now) } }))
      ))
)
