import { TOOL_NAME_MAX_LENGTH } from "../graph/toolName.ts"
import type { McpConfig, McpDiscoveredTool } from "./toolDefinition.ts"
import { functionNameOf } from "./toolRecord.ts"
import type { RunnableTool } from "./toolRun.ts"

const slug = (value: string) => value.toLowerCase().replace(/[^a-z0-9]+/g, "_").replace(/^_+|_+$/g, "")

/**
 * The function name one tool of an MCP server is offered under, Dograh's `mcp__<server>__<tool>`
 * (the server named by its library tool's name), bounded to what model providers accept. The
 * server's own tool name may hold characters providers refuse, so it is slugged too.
 */
export const mcpFunctionName = (serverName: string, toolName: string): string => {
  const server = functionNameOf(serverName)
  const tool = slug(toolName) || "tool"
  const prefix = `mcp__${server}__`.slice(0, Math.max(TOOL_NAME_MAX_LENGTH - 16, 8))
  return `${prefix}${tool}`.slice(0, TOOL_NAME_MAX_LENGTH)
}

/** The server's tools the model is offered: the catalog, narrowed to `tools_filter` when it names any. */
export const offeredMcpTools = (config: McpConfig): ReadonlyArray<McpDiscoveredTool> => {
  const filter = config.tools_filter ?? []
  const all = config.discovered_tools ?? []
  return filter.length === 0 ? all : all.filter((tool) => filter.includes(tool.name))
}

/** The tools an MCP library tool stands for, with their function names, for graph validation. */
export const mcpServerTools = (
  serverName: string,
  config: McpConfig
): ReadonlyArray<{ readonly name: string; readonly functionName: string }> =>
  offeredMcpTools(config).map((tool) => ({ name: tool.name, functionName: mcpFunctionName(serverName, tool.name) }))

/**
 * An MCP library tool as the runnable tools it expands to, one per tool of the server offered;
 * a second server tool whose name slugs to one already taken is left out (the model could not
 * tell them apart).
 */
export const expandMcpTool = (tool: RunnableTool): ReadonlyArray<RunnableTool> => {
  if (tool.definition.type !== "mcp") return [tool]
  const seen = new Set<string>()
  const expanded: Array<RunnableTool> = []
  for (const discovered of offeredMcpTools(tool.definition.config)) {
    const name = mcpFunctionName(tool.name, discovered.name)
    if (seen.has(name)) continue
    seen.add(name)
    expanded.push({
      ...tool,
      name,
      description: discovered.description?.trim() || `${discovered.name} (${tool.description})`,
      mcpTool: discovered
    })
  }
  return expanded
}

/** An MCP tool's arguments schema, as a function's parameters: always an object schema. */
export const mcpParameters = (tool: McpDiscoveredTool): Record<string, unknown> => {
  const schema = tool.inputSchema
  if (!schema || schema["type"] !== "object") return { type: "object", properties: {} }
  return schema
}

interface McpContent {
  readonly type: string
  readonly text?: unknown
  readonly mimeType?: unknown
  readonly resource?: { readonly uri?: unknown; readonly text?: unknown }
  readonly uri?: unknown
}

/**
 * A `tools/call` result as text for the model: text parts as they are, structured content as
 * JSON when there is no text, other parts (images, audio) named rather than inlined.
 */
export const mcpResultText = (result: { readonly content?: unknown; readonly structuredContent?: unknown }): string => {
  const parts: Array<string> = []
  for (const part of Array.isArray(result.content) ? result.content as ReadonlyArray<McpContent> : []) {
    if (part.type === "text" && typeof part.text === "string") parts.push(part.text)
    else if (part.type === "resource" && typeof part.resource?.text === "string") parts.push(part.resource.text)
    else if (part.type === "resource_link" && typeof part.uri === "string") parts.push(`[resource ${part.uri}]`)
    else parts.push(`[${part.type}${typeof part.mimeType === "string" ? ` ${part.mimeType}` : ""} content omitted]`)
  }
  if (parts.length === 0 && result.structuredContent !== undefined) return JSON.stringify(result.structuredContent)
  return parts.join("\n")
}

/** Bounds on what is kept of a server's catalog entry: a server could send anything. */
const MAX_NAME = 200
const MAX_DESCRIPTION = 2000
const MAX_SCHEMA_CHARS = 20_000

/**
 * A catalog entry as kept: a name too long for any model is left out (null), a description is
 * cut, and an input schema that is not a small JSON object becomes "no arguments".
 */
export const keptCatalogEntry = (tool: {
  readonly name: string
  readonly description?: string | undefined
  readonly inputSchema?: unknown
  readonly annotations?: { readonly readOnlyHint?: boolean | undefined } | undefined
}): McpDiscoveredTool | null => {
  if (tool.name.length === 0 || tool.name.length > MAX_NAME) return null
  const schema = tool.inputSchema
  const small = schema !== null && typeof schema === "object" && !Array.isArray(schema) &&
    JSON.stringify(schema).length <= MAX_SCHEMA_CHARS
  return {
    name: tool.name,
    description: tool.description?.slice(0, MAX_DESCRIPTION) ?? null,
    inputSchema: small ? schema as NonNullable<McpDiscoveredTool["inputSchema"]> : { type: "object", properties: {} },
    ...(tool.annotations?.readOnlyHint === true ? { read_only: true } : {})
  }
}
