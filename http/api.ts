import { HttpApi, OpenApi } from "@effect/platform"
import { ApiKeysApi } from "./v1/apiKeys/api.ts"
import { AuthApi } from "./v1/auth/api.ts"
import { HealthApi } from "./v1/health/api.ts"
import { StatusApi } from "./v2/status/api.ts"
import { describeErrorBodies } from "./openapiErrors.ts"

/** The whole public interface: v1 (Dograh-compatible paths) and v2 groups in one API. */
export class Api extends HttpApi.make("talkgraph")
  .add(HealthApi)
  .add(AuthApi)
  .add(ApiKeysApi)
  .add(StatusApi)
  .annotate(OpenApi.Title, "talkgraph")
  .annotate(OpenApi.Description, "Voice and chat AI agents, their calls, campaigns and usage.")
  .annotate(OpenApi.Transform, describeErrorBodies)
{}
