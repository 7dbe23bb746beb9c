import { Context, type Effect } from "effect"
import type { Conflict, NotFound, ValidationFailed } from "../src/domain/errors.ts"
import type { OrganizationId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { McpDiscoveredTool, ToolDefinition, ToolStatus, ToolType } from "../src/tools/toolDefinition.ts"
import type { Tool } from "../src/tools/toolRecord.ts"
import type { RunnableTool, ToolOutcome } from "../src/tools/toolRun.ts"

export interface ToolInput {
  /** Kept when given (a tool moved from another installation); refused when another tool has it. */
  readonly tool_uuid?: string | undefined
  readonly name: string
  readonly description?: string | null | undefined
  readonly category?: ToolType | undefined
  readonly icon?: string | null | undefined
  readonly icon_color?: string | null | undefined
  readonly definition: ToolDefinition
}

export interface ToolUpdate {
  readonly name?: string | undefined
  readonly description?: string | null | undefined
  readonly icon?: string | null | undefined
  readonly icon_color?: string | null | undefined
  readonly definition?: ToolDefinition | undefined
  readonly status?: ToolStatus | undefined
}

export interface ToolTestInput {
  /** Values for the parameters the model would give. */
  readonly llm_params: Readonly<Record<string, unknown>>
  /** Values for the preset parameters, in place of their templates. */
  readonly preset_params: Readonly<Record<string, unknown>>
}

/** A tool's name as graph validation needs it: its function name(s), and whether it may still run. */
export interface ToolReference {
  readonly name: string
  readonly status: ToolStatus
  /** An MCP server's tools, under the namespaced names the model is offered them by. */
  readonly functionNames?: ReadonlyArray<string> | undefined
}

/** Dograh's `McpRefreshResponse`: the catalog now, or the one kept and why the server could not be reached. */
export interface McpRefresh {
  readonly tool_uuid: string
  readonly discovered_tools: ReadonlyArray<McpDiscoveredTool>
  readonly error: string | null
}

/** An organization's tool library; every operation is scoped to the caller's organization. */
export interface ToolsShape {
  readonly list: (principal: Principal, statuses: ReadonlyArray<ToolStatus>) => Effect.Effect<ReadonlyArray<Tool>>
  readonly get: (principal: Principal, uuid: string) => Effect.Effect<Tool, NotFound>
  readonly create: (principal: Principal, input: ToolInput) => Effect.Effect<Tool, Conflict | ValidationFailed>
  readonly update: (
    principal: Principal,
    uuid: string,
    input: ToolUpdate
  ) => Effect.Effect<Tool, NotFound | ValidationFailed>
  readonly setStatus: (principal: Principal, uuid: string, status: ToolStatus) => Effect.Effect<Tool, NotFound>
  /** Runs the tool once with the given arguments; the request made (credentials masked) and the answer. */
  readonly test: (
    principal: Principal,
    uuid: string,
    input: ToolTestInput
  ) => Effect.Effect<ToolOutcome & { readonly tool: Tool }, NotFound | ValidationFailed>
  /** Fetches an MCP tool's server catalog again and keeps it; an unreachable server keeps the one it had. */
  readonly refreshMcp: (principal: Principal, uuid: string) => Effect.Effect<McpRefresh, NotFound | ValidationFailed>
  /** The organization's tools among `uuids`, for validating the graphs that name them. */
  readonly references: (
    organizationId: OrganizationId,
    uuids: ReadonlySet<string>
  ) => Effect.Effect<ReadonlyMap<string, ToolReference>>
  /** The organization's active tools among `uuids`, ready to run in a conversation. */
  readonly runnable: (
    organizationId: OrganizationId,
    uuids: ReadonlySet<string>
  ) => Effect.Effect<ReadonlyMap<string, RunnableTool>>
}

export class Tools extends Context.Tag("talkgraph/Tools")<Tools, ToolsShape>() {}
