import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonObject, JsonValue } from "../../../src/domain/wireTypes.ts"
import { McpDiscoveredTool, ToolDefinition, ToolStatus, ToolType } from "../../../src/tools/toolDefinition.ts"
import { Tool } from "../../../src/tools/toolRecord.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

const Name = Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(255))
const Description = Schema.NullOr(Schema.String.pipe(Schema.maxLength(2000)))

export const CreateToolRequest = bodySchema("CreateTool", {
  tool_uuid: Schema.optional(
    Schema.String.pipe(Schema.pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, {
      message: () => "must be a UUID"
    }))
  ).annotations({
    description:
      "Keeps a tool's id when it moves from another installation (Dograh), so imported agents' tool_uuids still name it; a new one when absent"
  }),
  name: Name,
  description: Schema.optional(Description),
  category: Schema.optional(ToolType).annotations({
    description: "Must match definition.type; taken from it when omitted"
  }),
  icon: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(50)))),
  icon_color: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(7)))),
  definition: ToolDefinition
})

export const UpdateToolRequest = bodySchema("UpdateTool", {
  name: Schema.optional(Name),
  description: Schema.optional(Description),
  icon: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(50)))),
  icon_color: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(7)))),
  definition: Schema.optional(ToolDefinition),
  status: Schema.optional(ToolStatus)
})

export const ToolTestRequest = bodySchema("ToolTest", {
  llm_params: Schema.optionalWith(JsonObject, { default: () => ({}) }).annotations({
    description: "Values for the parameters the model would give"
  }),
  preset_params: Schema.optionalWith(JsonObject, { default: () => ({}) }).annotations({
    description: "Values for the preset parameters, in place of their templates"
  })
})

/** Dograh's `ToolTestResponse`, with what the model would be told (`result`). Credentials are masked. */
export const ToolTestResponse = Schema.Struct({
  status: Schema.Literal("success", "error"),
  status_code: Schema.NullOr(Schema.Int),
  data: JsonValue,
  error: Schema.NullOr(Schema.String),
  result: Schema.String.annotations({
    description: "What the model is told: the answer (pointed at, truncated) or the error"
  }),
  truncated: Schema.Boolean,
  request_method: Schema.NullOr(Schema.String),
  request_url: Schema.NullOr(Schema.String),
  request_headers: Schema.Record({ key: Schema.String, value: Schema.String }),
  request_body: JsonValue,
  duration_ms: Schema.Number
}).annotations({ identifier: "ToolTestResponse" })

/** Dograh's `McpRefreshResponse`. */
export const McpRefreshResponse = Schema.Struct({
  tool_uuid: Schema.String,
  discovered_tools: Schema.Array(McpDiscoveredTool),
  error: Schema.NullOr(Schema.String).annotations({
    description: "Why the server could not be reached; the tools listed before are kept"
  })
}).annotations({ identifier: "McpRefreshResponse" })

export const ToolArchived = Schema.Struct({ status: Schema.Literal("archived"), tool_uuid: Schema.String }).annotations(
  {
    identifier: "ToolArchivedResponse"
  }
)

const StatusList = Schema.String.pipe(
  Schema.pattern(/^(active|archived)(,(active|archived))*$/, {
    message: () => "must be active, archived or active,archived"
  })
)

export const ToolListQuery = querySchema("ToolList", { status: Schema.optional(StatusList) })

const ToolPath = pathSchema("Tool", { tool_uuid: Schema.String })

export const ToolsApi = HttpApiGroup.make("tools")
  .annotate(
    OpenApi.Description,
    "The organization's tool library (Dograh's shape): HTTP API tools, MCP servers, calculator, current_time, end_call. Agent nodes name tools in `tool_uuids`. Reading needs `agents:read`, changing and testing `agents:write`."
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .annotate(OpenApi.Summary, "List tools")
      .annotate(OpenApi.Description, "Active tools, or those with the given `status` (comma-separated).")
      .setUrlParams(ToolListQuery)
      .addSuccess(Schema.Array(Tool))
  )
  .add(
    HttpApiEndpoint.post("create", "/")
      .annotate(OpenApi.Summary, "Create a tool")
      .annotate(
        OpenApi.Description,
        "Adds a tool to the library. An HTTP API tool's URL, credential and host are checked when it is saved."
      )
      .setPayload(CreateToolRequest)
      .addSuccess(Tool)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.get("get", "/:tool_uuid")
      .annotate(OpenApi.Summary, "Get a tool")
      .annotate(OpenApi.Description, "One tool, archived or not.")
      .setPath(ToolPath)
      .addSuccess(Tool)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.put("update", "/:tool_uuid")
      .annotate(OpenApi.Summary, "Change a tool")
      .annotate(
        OpenApi.Description,
        "Changes the fields given; the definition is checked again, its credential against the URL's host."
      )
      .setPath(ToolPath)
      .setPayload(UpdateToolRequest)
      .addSuccess(Tool)
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.del("archive", "/:tool_uuid")
      .annotate(OpenApi.Summary, "Archive a tool")
      .annotate(
        OpenApi.Description,
        "Archives the tool (Dograh's delete): nodes naming it fail validation until it is restored."
      )
      .setPath(ToolPath)
      .addSuccess(ToolArchived)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("unarchive", "/:tool_uuid/unarchive")
      .annotate(OpenApi.Summary, "Restore a tool")
      .annotate(OpenApi.Description, "Makes an archived tool active again.")
      .setPath(ToolPath)
      .addSuccess(Tool)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("test", "/:tool_uuid/test")
      .annotate(OpenApi.Summary, "Test a tool")
      .annotate(
        OpenApi.Description,
        "Runs the tool once with the given arguments, as a conversation would, and shows the request made (credentials masked) and the answer. An MCP tool lists its server's tools (and keeps them), or with `llm_params.tool_name` calls that tool with `llm_params.arguments`."
      )
      .setPath(ToolPath)
      .setPayload(ToolTestRequest)
      .addSuccess(ToolTestResponse)
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("refreshMcp", "/:tool_uuid/mcp/refresh")
      .annotate(OpenApi.Summary, "Refresh an MCP tool's catalog")
      .annotate(
        OpenApi.Description,
        "Lists the MCP server's tools again and keeps them as `definition.config.discovered_tools`. A server that cannot be reached answers 200 with `error`, and the tools listed before are kept."
      )
      .setPath(ToolPath)
      .addSuccess(McpRefreshResponse)
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/tools")
