import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonObject } from "../../../src/domain/wireTypes.ts"
import { Workflow } from "../../../src/workflows/workflowRecord.ts"
import { HttpForbidden, HttpNotFound } from "../../errors.ts"
import { IdFromPath, pathSchema } from "../../requestSchemas.ts"
import { V2Auth } from "../../security.ts"
import { Collection, PageQuery, Resource } from "../envelopes.ts"

/**
 * An agent (a v1 workflow) with its working version: the draft when one exists, else the
 * published version. `definition` and `configurations` are present only when reading one agent.
 * Its fields are the workflow's (src/workflows/workflowRecord.ts), under the v2 names.
 */
export const V2Agent = Schema.Struct({
  id: Workflow.fields.id,
  uuid: Workflow.fields.workflow_uuid,
  name: Workflow.fields.name,
  status: Workflow.fields.status,
  version_number: Workflow.fields.version_number,
  version_status: Workflow.fields.version_status,
  created_at: Workflow.fields.created_at,
  updated_at: Workflow.fields.updated_at,
  definition: Schema.optional(JsonObject),
  configurations: Schema.optional(JsonObject)
}).annotations({ identifier: "V2_Agent" })

const AgentPath = pathSchema("Agent", { agent_id: IdFromPath.pipe(Schema.brand("WorkflowId")) })

export const AgentsApi = HttpApiGroup.make("agents")
  .annotate(OpenApi.Description, "Agents (v1 workflows) for v2 clients. Needs an API key with `agents:read`.")
  .add(
    HttpApiEndpoint.get("list", "/")
      .annotate(OpenApi.Summary, "List agents")
      .annotate(OpenApi.Description, "The organization's agents, newest first, paginated with `page` and `page_size`.")
      .setUrlParams(PageQuery)
      .addSuccess(Collection(V2Agent))
  )
  .add(
    HttpApiEndpoint.get("get", "/:agent_id")
      .annotate(OpenApi.Summary, "Get an agent")
      .annotate(
        OpenApi.Description,
        "One agent with its working version (the draft when there is one, else the published version), including its definition and configurations."
      )
      .setPath(AgentPath)
      .addSuccess(Resource(V2Agent))
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .middleware(V2Auth)
  .prefix("/api/v2/agents")
