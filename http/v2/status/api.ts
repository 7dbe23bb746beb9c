import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { V2Auth } from "../../security.ts"
import { Resource } from "../envelopes.ts"
import { Timestamp } from "../../../src/domain/wireTypes.ts"

export const V2ServiceStatus = Schema.Struct({
  status: Schema.Literal("ok"),
  version: Schema.String,
  time: Timestamp
}).annotations({ identifier: "V2_ServiceStatus" })

export const StatusApi = HttpApiGroup.make("status")
  .add(HttpApiEndpoint.get("status", "/api/v2/status").addSuccess(Resource(V2ServiceStatus)))
  .middleware(V2Auth)
