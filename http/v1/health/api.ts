import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"

export const HealthResponse = Schema.Struct({ status: Schema.Literal("ok") }).annotations({
  identifier: "HealthResponse"
})

/** Unauthenticated liveness for load balancers. */
export const HealthApi = HttpApiGroup.make("health")
  .annotate(OpenApi.Description, "Liveness for load balancers.")
  .add(
    HttpApiEndpoint.get("health", "/api/v1/health")
      .annotate(OpenApi.Summary, "Health check")
      .annotate(OpenApi.Description, "Answers 200 while the server is up. Needs no credentials.")
      .addSuccess(HealthResponse)
  )
