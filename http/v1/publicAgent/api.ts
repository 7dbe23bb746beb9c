import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonObject } from "../../../src/domain/wireTypes.ts"
import {
  HttpConflict,
  HttpForbidden,
  HttpNotFound,
  HttpTooManyRequests,
  HttpUpstreamFailed,
  HttpValidationFailed
} from "../../errors.ts"
import { bodySchema, pathSchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"
import { IdempotencyHeaders } from "../../v2/calls/api.ts"

const Id = Schema.Int.pipe(Schema.positive())

/** Dograh's `TriggerCallRequest`. */
export const TriggerCallRequest = bodySchema("TriggerCall", {
  phone_number: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(64)),
  initial_context: Schema.optional(Schema.NullOr(JsonObject)),
  telephony_configuration_id: Schema.optional(Schema.NullOr(Id.pipe(Schema.brand("TelephonyConfigId")))),
  from_phone_number_id: Schema.optional(Schema.NullOr(Id))
})

/** Dograh's `TriggerCallResponse`. */
export const TriggerCallResponse = Schema.Struct({
  status: Schema.String,
  workflow_run_id: Schema.Int,
  workflow_run_name: Schema.String
}).annotations({ identifier: "TriggerCallResponse" })

const AgentPath = pathSchema("PublicAgent", { uuid: Schema.String })
const WorkflowPath = pathSchema("PublicAgentWorkflow", { workflow_uuid: Schema.String })

const trigger = <Name extends string, Path extends `/${string}`>(
  name: Name,
  path: Path,
  summary: string,
  description: string
) =>
  HttpApiEndpoint.post(name, path)
    .annotate(OpenApi.Summary, summary)
    .annotate(OpenApi.Description, description)
    .setPayload(TriggerCallRequest)
    .setHeaders(IdempotencyHeaders)
    .addSuccess(TriggerCallResponse)
    .addError(HttpNotFound)
    .addError(HttpConflict)
    .addError(HttpValidationFailed)
    .addError(HttpTooManyRequests)
    .addError(HttpUpstreamFailed)

const AGENT_UUID =
  "A trigger node's `trigger_path` (an enabled trigger node of the agent's published version; of its draft on the test route), or else the agent's own UUID (`workflow_uuid`). Paths are looked up in the API key's organization only."

/**
 * Dograh's public agent routes (`api/routes/public_agent.py`): a CRM places one call with an API
 * key in `X-API-Key`. Needs the `calls:write` scope.
 */
export const PublicAgentApi = HttpApiGroup.make("publicAgent")
  .annotate(
    OpenApi.Description,
    "Dograh-compatible single-call routes: place a call with an agent from another system. API key in `X-API-Key` with `calls:write`. The call is the same as `POST /api/v2/calls` makes."
  )
  .add(
    trigger("trigger", "/api/v1/public/agent/:uuid", "Call with the published agent", AGENT_UUID).setPath(AgentPath)
  )
  .add(
    trigger(
      "triggerTest",
      "/api/v1/public/agent/test/:uuid",
      "Call with the agent's latest draft",
      `${AGENT_UUID} Runs the latest draft, or the published version when there is no draft.`
    ).setPath(AgentPath)
  )
  .add(
    trigger(
      "triggerWorkflow",
      "/api/v1/public/agent/workflow/:workflow_uuid",
      "Call with the published workflow",
      "The workflow by its UUID, published version."
    ).setPath(WorkflowPath)
  )
  .add(
    trigger(
      "triggerTestWorkflow",
      "/api/v1/public/agent/test/workflow/:workflow_uuid",
      "Call with the workflow's latest draft",
      "The workflow by its UUID: the latest draft, or the published version when there is no draft."
    ).setPath(WorkflowPath)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
