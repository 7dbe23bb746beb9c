import { Layer } from "effect"
import { CredentialsLive } from "./credentials.ts"
import { McpServersLive } from "./mcpServers.ts"
import { ToolRunnerLive } from "./toolRunner.ts"
import { ToolsLive } from "./tools.ts"

/** The tool library, its credentials and the runner, over the SQL client, the secret box and the outbound policy. */
export const ToolsAreaLive = ToolsLive.pipe(
  Layer.provideMerge(ToolRunnerLive),
  Layer.provideMerge(McpServersLive),
  Layer.provideMerge(CredentialsLive)
)
