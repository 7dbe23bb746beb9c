import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Tool } from "../../../src/tools/toolRecord.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { pathSchema } from "../../requestSchemas.ts"
import { V2Auth } from "../../security.ts"
import {
  CreateToolRequest,
  McpRefreshResponse,
  ToolTestRequest,
  ToolTestResponse,
  UpdateToolRequest
} from "../../v1/tools/api.ts"
import { Collection, PageQuery, Resource } from "../envelopes.ts"

const ToolPath = pathSchema("V2Tool", { tool_uuid: Schema.String })

export const V2ToolsApi = HttpApiGroup.make("v2tools")
  .annotate(
    OpenApi.Description,
    "The organization's tool library for v2 clients: the same tools as /api/v1/tools, in v2 envelopes. Reading needs `agents:read`; changing and testing `agents:write`."
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .annotate(OpenApi.Summary, "List tools")
      .annotate(OpenApi.Description, "Active and archived tools, oldest first, paginated with `page` and `page_size`.")
      .setUrlParams(PageQuery)
      .addSuccess(Collection(Tool))
  )
  .add(
    HttpApiEndpoint.post("create", "/")
      .annotate(OpenApi.Summary, "Create a tool")
      .annotate(OpenApi.Description, "Adds a tool to the library, as POST /api/v1/tools does.")
      .setPayload(CreateToolRequest)
      .addSuccess(Resource(Tool))
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.get("get", "/:tool_uuid")
      .annotate(OpenApi.Summary, "Get a tool")
      .annotate(OpenApi.Description, "One tool, archived or not.")
      .setPath(ToolPath)
      .addSuccess(Resource(Tool))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.put("update", "/:tool_uuid")
      .annotate(OpenApi.Summary, "Change a tool")
      .annotate(OpenApi.Description, "Changes the fields given; the definition is checked again.")
      .setPath(ToolPath)
      .setPayload(UpdateToolRequest)
      .addSuccess(Resource(Tool))
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("archive", "/:tool_uuid/archive")
      .annotate(OpenApi.Summary, "Archive a tool")
      .annotate(OpenApi.Description, "Archives the tool: nodes naming it fail validation until it is restored.")
      .setPath(ToolPath)
      .addSuccess(Resource(Tool))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("unarchive", "/:tool_uuid/unarchive")
      .annotate(OpenApi.Summary, "Restore an archived tool")
      .annotate(OpenApi.Description, "Makes an archived tool active again.")
      .setPath(ToolPath)
      .addSuccess(Resource(Tool))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("test", "/:tool_uuid/test")
      .annotate(OpenApi.Summary, "Test a tool")
      .annotate(
        OpenApi.Description,
        "Runs the tool once with the given arguments; the request made (credentials masked) and the answer."
      )
      .setPath(ToolPath)
      .setPayload(ToolTestRequest)
      .addSuccess(Resource(ToolTestResponse))
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("refreshMcp", "/:tool_uuid/mcp/refresh")
      .annotate(OpenApi.Summary, "Refresh an MCP tool's catalog")
      .annotate(
        OpenApi.Description,
        "Lists the MCP server's tools again and keeps them; an unreachable server answers with `error` and the tools listed before."
      )
      .setPath(ToolPath)
      .addSuccess(Resource(McpRefreshResponse))
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .addError(HttpForbidden)
  .middleware(V2Auth)
  .prefix("/api/v2/tools")
