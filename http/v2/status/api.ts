import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Timestamp } from "../../../src/domain/wireTypes.ts"
import { V2Auth } from "../../security.ts"
import { Resource } from "../envelopes.ts"

export const V2ServiceStatus = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  time: Timestamp
}).annotations({ identifier: "V2_ServiceStatus" })

export const StatusApi = HttpApiGroup.make("status")
  .annotate(OpenApi.Description, "Service status for v2 clients.")
  .add(
    HttpApiEndpoint.get("status", "/api/v2/status")
      .annotate(OpenApi.Summary, "Service status")
      .annotate(OpenApi.Description, "Liveness, the server's version and its clock. Needs an API key.")
      .addSuccess(Resource(V2ServiceStatus))
  )
  .middleware(V2Auth)
