import { Context, type Effect, Schema } from "effect"
import type { OrganizationId } from "../src/domain/ids.ts"
import type { McpConfig, McpDiscoveredTool } from "../src/tools/toolDefinition.ts"

/** An MCP server could not be used; `message` is talkgraph's words (never a header or a secret), fit for the model. */
export class McpUnavailable extends Schema.TaggedError<McpUnavailable>()("McpUnavailable", {
  message: Schema.String
}) {}

/** What one `tools/call` answered: its content as text (secrets sent to the server replaced), and whether it is an error. */
export interface McpCallAnswer {
  readonly text: string
  readonly isError: boolean
}

/**
 * The organization's MCP servers, reached with the MCP SDK's client over the outbound policy
 * (`tools` kind), with the tool's stored credential sent only to the host it is bound to. Each
 * operation opens a session (initialize), does its exchange and ends the session, all within the
 * tool's timeout.
 */
export interface McpServersShape {
  /** The server's tool catalog (`tools/list`, every page). */
  readonly discover: (
    organizationId: OrganizationId,
    config: McpConfig
  ) => Effect.Effect<ReadonlyArray<McpDiscoveredTool>, McpUnavailable>
  /** Calls one of the server's tools; a tool's own error (`isError`) is an answer, not a failure. */
  readonly call: (
    organizationId: OrganizationId,
    config: McpConfig,
    toolName: string,
    args: Readonly<Record<string, unknown>>
  ) => Effect.Effect<McpCallAnswer, McpUnavailable>
}

export class McpServers extends Context.Tag("talkgraph/McpServers")<McpServers, McpServersShape>() {}
