import type { WorkflowEdge, WorkflowGraph, WorkflowNode } from "../graph/definition.ts"
import type { CreateTestCaseRequest } from "./testCase.ts"

/** Caller turns a proposed case allows beyond the transitions its path takes. */
const SPARE_TURNS = 4

const nameOf = (node: WorkflowNode) => node.data.name

/**
 * The shortest path of transitions from the start node to each node (breadth first, edges in
 * definition order): what a caller must do, in order, to be taken there.
 */
const pathsFromStart = (graph: WorkflowGraph, start: string) => {
  const paths = new Map<string, ReadonlyArray<WorkflowEdge>>([[start, []]])
  const queue = [start]
  while (queue.length > 0) {
    const at = queue.shift()!
    for (const edge of graph.edges) {
      if (edge.source !== at || paths.has(edge.target)) continue
      paths.set(edge.target, [...paths.get(at)!, edge])
      queue.push(edge.target)
    }
  }
  return paths
}

const personaFor = (agentName: string, path: ReadonlyArray<WorkflowEdge>, byId: Map<string, WorkflowNode>) =>
  [
    `You are a caller talking to "${agentName}". Behave like a real person on the phone: short answers, in your own words.`,
    "Over the conversation, in this order:",
    ...path.map((edge, index) =>
      `${index + 1}. Bring the conversation to where this holds: "${edge.data.condition}" ` +
      `(so the agent moves from "${nameOf(byId.get(edge.source)!)}" to "${nameOf(byId.get(edge.target)!)}").`
    ),
    "Then let the agent finish; do not invent another request."
  ].join("\n")

/**
 * A case set covering every transition of the graph (and so every node reachable from the start):
 * for each edge, a simulated caller whose persona asks them to meet the conditions of the
 * shortest path that takes it, with that path's nodes expected visited. The variables the agent's
 * prompts need (those without a default) get sample values. Proposals for a person to edit (the personas are derived from the
 * conditions word for word), not stored.
 */
export const proposeCases = (
  agentName: string,
  graph: WorkflowGraph,
  variables: ReadonlyArray<string>
): Array<CreateTestCaseRequest> => {
  const start = graph.nodes.find((node) => node.type === "startCall")
  if (!start) return []
  const byId = new Map(graph.nodes.map((node) => [node.id, node] as const))
  const paths = pathsFromStart(graph, start.id)
  const sample = Object.fromEntries(variables.map((name) => [name, `Sample ${name.replaceAll("_", " ")}`]))
  const byEdge = graph.edges.flatMap((edge) => {
    const before = paths.get(edge.source)
    if (!before) return []
    const path = [...before, edge]
    return [{
      name: `${nameOf(byId.get(edge.source)!)} → ${nameOf(byId.get(edge.target)!)}: ${edge.data.label}`.slice(0, 200),
      persona: personaFor(agentName, path, byId),
      variables: sample,
      max_turns: Math.min(50, path.length + SPARE_TURNS),
      expectations: {
        nodes_visited: [start.id, ...path.map((step) => step.target)].filter((id, i, all) => all.indexOf(id) === i),
        no_loop: true
      },
      interrupts: false
    }]
  })
  if (byEdge.length > 0) return byEdge
  // A graph with no transition: one caller who simply talks to the start node.
  return [{
    name: `${nameOf(start)}: a caller with a question`,
    persona: personaFor(agentName, [], byId),
    variables: sample,
    max_turns: SPARE_TURNS,
    expectations: { nodes_visited: [start.id], no_loop: true },
    interrupts: false
  }]
}
