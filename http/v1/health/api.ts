import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"

export const HealthResponse = Schema.Struct({ status: Schema.Literal("ok") }).annotations({ identifier: "HealthResponse" })

/** Unauthenticated liveness for load balancers. */
export const HealthApi = HttpApiGroup.make("health")
  .add(HttpApiEndpoint.get("health", "/api/v1/health").addSuccess(HealthResponse))
