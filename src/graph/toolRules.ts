import type { Path } from "./decodeIssues.ts"
import type { EdgeEntry, NodeEntry } from "./graphEntries.ts"
import { RESERVED_TOOL_NAMES, toolNameFor } from "./toolName.ts"
import type { KnownTool } from "./toolReferences.ts"

const listedTools = (node: NodeEntry): Array<unknown> =>
  Array.isArray(node.rawData["tool_uuids"]) ? node.rawData["tool_uuids"] : []

/** The server tools a node picked for an MCP tool in `mcp_tools`, or null when it picked none. */
const pickedServerTools = (node: NodeEntry, uuid: string): ReadonlyArray<unknown> | null => {
  const chosen = node.rawData["mcp_tools"]
  if (chosen === null || typeof chosen !== "object" || Array.isArray(chosen)) return null
  const picked = (chosen as Record<string, unknown>)[uuid]
  return Array.isArray(picked) ? picked : null
}

/** The function names a tool is offered under at a node: an MCP server's, narrowed to the node's picks. */
const functionNamesAt = (tool: KnownTool, picker: NodeEntry, uuid: string): ReadonlyArray<string> => {
  if (tool.serverTools === undefined) return [tool.name]
  const picked = pickedServerTools(picker, uuid)
  return tool.serverTools.filter((each) => picked === null || picked.includes(each.name)).map((each) =>
    each.functionName
  )
}

/**
 * Rules on the library tools a node names: each listed once, each a tool of the organization
 * that is not archived (when the caller looked them up: validation stays pure), and none offered
 * under a name the node already uses for an edge, `end_call` or another tool.
 */
export const checkTools = (
  nodes: ReadonlyArray<NodeEntry>,
  edges: ReadonlyArray<EdgeEntry>,
  report: (node: NodeEntry, field: Path, rule: string, message: string) => void,
  tools?: ReadonlyMap<string, KnownTool>
) => {
  const global = nodes.find((node) => node.type === "globalNode")
  const globalUuids = global ? listedTools(global).filter((uuid): uuid is string => typeof uuid === "string") : []
  for (const node of nodes) {
    if (node.type === "endCall") continue
    const listed = listedTools(node)
    const seen = new Set<string>()
    listed.forEach((uuid, index) => {
      if (typeof uuid !== "string") return
      const field: Path = ["data", "tool_uuids", index]
      if (seen.has(uuid)) report(node, field, "tool_duplicate", `tool ${uuid} is listed twice`)
      seen.add(uuid)
      if (!tools) return
      const tool = tools.get(uuid)
      if (!tool) {
        report(
          node,
          field,
          "tool_unknown",
          `tool_uuids[${index}] "${uuid}" is not a tool of this organization; create it at /api/v1/tools`
        )
      } else if (tool.status === "archived") {
        report(
          node,
          field,
          "tool_archived",
          `tool "${tool.name}" (${uuid}) is archived; restore it or remove it from the node`
        )
      }
    })
    const chosen = node.rawData["mcp_tools"]
    if (chosen !== null && typeof chosen === "object" && !Array.isArray(chosen)) {
      for (const uuid of Object.keys(chosen)) {
        const field: Path = ["data", "mcp_tools", uuid]
        if (!seen.has(uuid)) {
          report(
            node,
            field,
            "mcp_tools_unlisted",
            `mcp_tools names tool ${uuid}, which is not in this node's tool_uuids`
          )
        } else {
          const tool = tools?.get(uuid)
          if (tool && tool.serverTools === undefined) {
            report(node, field, "mcp_tools_not_mcp", `tool "${tool.name}" is not an MCP server`)
          }
        }
      }
    }
    if (!tools) continue
    const taken = new Map<string, string>(RESERVED_TOOL_NAMES.map((name) => [name, `the built-in ${name}`]))
    for (const edge of edges) {
      if (edge.source === node.id && edge.data) taken.set(toolNameFor(edge.data.label), `edge "${edge.id}"`)
    }
    const inherited = node.type !== "globalNode" && node.rawData["add_global_prompt"] !== false ? globalUuids : []
    const offered = [
      ...listed.map((uuid, index) => ({ uuid, field: ["data", "tool_uuids", index] as Path, picker: node })),
      ...inherited.map((uuid) => ({ uuid, field: ["data"] as Path, picker: global! }))
    ]
    for (const { field, picker, uuid } of offered) {
      if (typeof uuid !== "string") continue
      const tool = tools.get(uuid)
      if (!tool) continue
      for (const name of functionNamesAt(tool, picker, uuid)) {
        const holder = taken.get(name)
        if (holder !== undefined && holder !== `tool ${uuid}`) {
          report(
            node,
            field,
            "tool_name_conflict",
            `tool "${name}" has the same name as ${holder} at this node; rename one of them`
          )
        }
        taken.set(name, `tool ${uuid}`)
      }
    }
  }
}
