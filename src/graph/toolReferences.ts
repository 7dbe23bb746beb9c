import { record } from "./decodeIssues.ts"
import type { WorkflowGraph } from "./definition.ts"

/** Every `tool_uuids` entry of a raw definition's nodes, for looking the tools up before validating. */
export const definitionToolUuids = (definition: unknown): Set<string> => {
  const uuids = new Set<string>()
  const nodes = record(definition)["nodes"]
  if (!Array.isArray(nodes)) return uuids
  for (const node of nodes) {
    const listed = record(record(node)["data"])["tool_uuids"]
    if (Array.isArray(listed)) { for (const uuid of listed) if (typeof uuid === "string") uuids.add(uuid) }
  }
  return uuids
}

/** The tools a validated graph names, for loading what a run may call. */
export const graphToolUuids = (graph: WorkflowGraph): Set<string> => {
  const uuids = new Set<string>()
  for (const node of graph.nodes) {
    if (node.type !== "endCall") { for (const uuid of node.data.tool_uuids ?? []) uuids.add(uuid) }
  }
  return uuids
}

/** What validation knows of a library tool: the function name it is offered under, and whether it may run. */
export interface KnownTool {
  readonly name: string
  /** An MCP server's tools it offers: each by its name in the catalog and its namespaced function name. */
  readonly serverTools?: ReadonlyArray<{ readonly name: string; readonly functionName: string }> | undefined
  readonly status: "active" | "archived"
}
