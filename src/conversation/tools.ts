import type { WorkflowEdge, WorkflowGraph } from "../graph/definition.ts"
import { toolNameFor } from "../graph/toolName.ts"

/** Always offered: the model ends the conversation when the user is done. */
export const END_CALL_TOOL = "end_call"

export interface ToolDefinition {
  readonly name: string
  readonly description: string
  /** The JSON Schema of its arguments; none for a tool that takes none (an edge, end_call). */
  readonly parameters?: Readonly<Record<string, unknown>> | undefined
}

interface NodeTools {
  /** What the model is offered at this node, edges first. */
  readonly definitions: ReadonlyArray<ToolDefinition>
  /** Tool name → the edge it follows. */
  readonly transitions: ReadonlyMap<string, WorkflowEdge>
}

/**
 * Each outgoing edge is a tool named by the shared rule (`toolNameFor`) and described by its
 * condition, so the model moves along an edge exactly when its condition holds.
 */
export const toolsAt = (graph: WorkflowGraph, nodeId: string): NodeTools => {
  const transitions = new Map<string, WorkflowEdge>()
  for (const edge of graph.edges) {
    if (edge.source === nodeId) transitions.set(toolNameFor(edge.data.label), edge)
  }
  const definitions: Array<ToolDefinition> = [...transitions].map(([name, edge]) => ({
    name,
    description: edge.data.condition
  }))
  if (!transitions.has(END_CALL_TOOL)) {
    definitions.push({
      name: END_CALL_TOOL,
      description: "End the conversation: the user said goodbye, asked to stop, or nothing is left to do."
    })
  }
  return { definitions, transitions }
}
