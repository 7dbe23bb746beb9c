import type { Path } from "./decodeIssues.ts"
import { type NodeType, SIDE_NODE_TYPES } from "./definition.ts"
import type { EdgeEntry, NodeEntry } from "./graphEntries.ts"
import type { GraphProblem } from "./problem.ts"
import { RESERVED_TOOL_NAMES, TOOL_NAME_MAX_LENGTH, toolNameFor } from "./toolName.ts"

interface Reporters {
  readonly workflowProblem: (path: Path, rule: string, message: string, stage: GraphProblem["stage"]) => void
  readonly nodeProblem: (node: NodeEntry, field: Path, rule: string, message: string) => void
  readonly edgeProblem: (edge: EdgeEntry, field: Path, rule: string, message: string) => void
}

/** Counts, degrees, reachability and tool names: the rules that make a graph runnable. */
export const checkTopology = (
  nodes: ReadonlyArray<NodeEntry>,
  edges: ReadonlyArray<EdgeEntry>,
  nodesById: ReadonlyMap<string, NodeEntry>,
  { edgeProblem, nodeProblem, workflowProblem }: Reporters
) => {
  const ofType = (type: NodeType) => nodes.filter((node) => node.type === type)
  const starts = ofType("startCall")
  if (starts.length === 0) {
    workflowProblem(
      ["nodes"],
      "start_missing",
      "the workflow needs exactly one startCall node; it has none",
      "readiness"
    )
  }
  for (const extra of starts.slice(1)) nodeProblem(extra, [], "start_duplicate", "only one startCall node is allowed")
  if (ofType("endCall").length === 0) {
    workflowProblem(
      ["nodes"],
      "end_missing",
      "the workflow needs at least one endCall node so a conversation can finish",
      "readiness"
    )
  }
  const triggerPaths = new Map<string, NodeEntry>()
  for (const trigger of ofType("trigger")) {
    const path = trigger.rawData["trigger_path"]
    if (typeof path !== "string") continue
    const other = triggerPaths.get(path)
    if (other) {
      nodeProblem(
        trigger,
        ["data", "trigger_path"],
        "trigger_path_duplicate",
        `trigger_path "${path}" is already used by node "${other.id}"`
      )
    } else triggerPaths.set(path, trigger)
  }
  for (const extra of ofType("globalNode").slice(1)) {
    nodeProblem(extra, [], "global_duplicate", "only one globalNode is allowed")
  }

  const outgoing = new Map<string, Array<EdgeEntry>>()
  for (const edge of edges) {
    const source = nodesById.get(edge.source)
    const target = nodesById.get(edge.target)
    if (!source || !target) continue
    outgoing.set(source.id, [...(outgoing.get(source.id) ?? []), edge])
    if (source.type === "globalNode" || target.type === "globalNode") {
      edgeProblem(edge, [], "global_node_edge", "a globalNode cannot be connected by edges")
    }
    for (const side of [source, target]) {
      if (SIDE_NODE_TYPES.includes(side.type)) {
        edgeProblem(
          edge,
          [side === source ? "source" : "target"],
          "side_node_edge",
          `a ${side.type} node takes no part in the conversation and cannot be connected by edges`
        )
      }
    }
    if (target.type === "startCall") {
      edgeProblem(edge, ["target"], "start_incoming", "no edge may lead into the startCall node")
    }
    if (source.type === "endCall") edgeProblem(edge, ["source"], "end_outgoing", "no edge may leave an endCall node")
  }

  for (const [sourceId, leaving] of outgoing) {
    const names = new Map<string, EdgeEntry>()
    for (const edge of leaving) {
      if (!edge.data) continue
      const name = toolNameFor(edge.data.label)
      if (!/[a-z0-9]/.test(name)) {
        edgeProblem(
          edge,
          ["data", "label"],
          "label_unusable",
          "data.label needs at least one letter or digit to name its transition tool"
        )
      } else if (RESERVED_TOOL_NAMES.includes(name)) {
        edgeProblem(
          edge,
          ["data", "label"],
          "label_reserved",
          `data.label gives the tool name "${name}", which is reserved for the built-in tool; choose another label`
        )
      } else if (name.length > TOOL_NAME_MAX_LENGTH) {
        edgeProblem(
          edge,
          ["data", "label"],
          "label_too_long",
          `data.label makes a tool name longer than ${TOOL_NAME_MAX_LENGTH} characters`
        )
      }
      const clash = names.get(name)
      if (clash) {
        edgeProblem(
          edge,
          ["data", "label"],
          "transition_name_duplicate",
          `data.label gives the tool name "${name}", already used by edge "${clash.id}" leaving node "${sourceId}"`
        )
      } else names.set(name, edge)
    }
  }

  const start = starts[0]
  if (!start) return
  if (!outgoing.has(start.id)) {
    nodeProblem(start, [], "start_no_exit", "the startCall node needs at least one outgoing edge")
  }
  const reached = new Set([start.id])
  const queue = [start.id]
  while (queue.length > 0) {
    for (const edge of outgoing.get(queue.shift()!) ?? []) {
      if (!reached.has(edge.target)) {
        reached.add(edge.target)
        queue.push(edge.target)
      }
    }
  }
  for (const node of nodes) {
    if (node.type !== "agentNode" && node.type !== "endCall") continue
    if (nodesById.get(node.id) !== node) continue
    if (!reached.has(node.id)) {
      nodeProblem(node, [], "node_unreachable", "no path of edges leads here from the startCall node")
    }
    if (node.type === "agentNode" && !outgoing.has(node.id)) {
      nodeProblem(
        node,
        [],
        "dead_end",
        "an agentNode needs at least one outgoing edge, or the conversation can never leave it"
      )
    }
  }
}
