import type { McpDiscoveredTool, ToolDefinition } from "./toolDefinition.ts"

/** A library tool as a conversation runs it: what the model is offered, and what a call does. */
export interface RunnableTool {
  readonly uuid: string
  /** The function name the model calls. */
  readonly name: string
  readonly description: string
  readonly definition: ToolDefinition
  /** MCP library tools: the one tool of the server this function calls. */
  readonly mcpTool?: McpDiscoveredTool | undefined
}

/**
 * Whether a call changes something at the other end, so it is never cut off half-way when the
 * caller speaks: an HTTP tool that is not a GET, an MCP tool its server does not mark read-only,
 * a transfer (the carrier is ringing the destination whatever the caller says).
 */
export const callChangesSomething = (tool: RunnableTool): boolean =>
  tool.definition.type === "http_api"
    ? tool.definition.config.method !== "GET"
    : tool.definition.type === "transfer_call" || (tool.definition.type === "mcp" && tool.mcpTool?.read_only !== true)

/** The request a tool call made, as it may be shown: every credential value masked. */
export interface ToolRequestShown {
  readonly method: string
  readonly url: string
  readonly headers: Readonly<Record<string, string>>
  readonly body: unknown
}

/** What one call of a tool came to. */
export interface ToolOutcome {
  readonly status: "success" | "error"
  /** What the model is told: the (pointed-at, truncated) answer, or what went wrong. */
  readonly result: string
  readonly truncated: boolean
  readonly latency_ms: number
  /** HTTP tools: the answer's status, when one came. */
  readonly status_code: number | null
  readonly request: ToolRequestShown | null
  /** HTTP tools: the whole answer, parsed when it is JSON (for the test endpoint; never stored). */
  readonly data: unknown
}

/** The note a failed call becomes for the model: it says so plainly, so the model can tell the user. */
export const failedOutcome = (message: string, latencyMs: number, extra: Partial<ToolOutcome> = {}): ToolOutcome => ({
  status: "error",
  result: `Error: ${message}`,
  truncated: false,
  latency_ms: latencyMs,
  status_code: null,
  request: null,
  data: null,
  ...extra
})
