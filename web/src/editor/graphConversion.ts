import type { Edge, Node } from "@xyflow/react"
import type { EdgeData, NodeType, StartCallData } from "../../../src/graph/definition.ts"

/**
 * A node's `data` as the editor holds it. A draft may be unfinished, so every field is optional;
 * keys the console does not know are kept as they are.
 */
export type NodeFields = Partial<StartCallData> & { readonly [key: string]: unknown }
export type EdgeFields = Partial<EdgeData> & { readonly [key: string]: unknown }

export interface GraphNodeData extends Record<string, unknown> {
  readonly fields: NodeFields
  /** The definition node's other top-level keys (another editor's layout state), written back unchanged. */
  readonly extra: Readonly<Record<string, unknown>>
  readonly problems?: ReadonlyArray<string>
  readonly active?: boolean
}

export interface GraphEdgeData extends Record<string, unknown> {
  readonly fields: EdgeFields
  readonly extra: Readonly<Record<string, unknown>>
  readonly problems?: ReadonlyArray<string>
}

export type GraphNode = Node<GraphNodeData, NodeType>
export type GraphEdge = Edge<GraphEdgeData>

export interface EditorGraph {
  readonly nodes: Array<GraphNode>
  readonly edges: Array<GraphEdge>
  /** The definition's keys besides nodes and edges. */
  readonly extra: Readonly<Record<string, unknown>>
}

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const without = (record: Json, keys: ReadonlyArray<string>) =>
  Object.fromEntries(Object.entries(record).filter(([key]) => !keys.includes(key)))

const NODE_KEYS = ["id", "type", "position", "data"]
const EDGE_KEYS = ["id", "source", "target", "data"]

/** Where a node without a stored position goes: a grid, row by row, so nothing overlaps. */
const gridPosition = (index: number) => ({ x: (index % 4) * 280, y: Math.floor(index / 4) * 180 })

const isPosition = (value: unknown): value is { x: number; y: number } =>
  isRecord(value) && typeof value.x === "number" && typeof value.y === "number"

/** A stored `workflow_definition` as React Flow nodes and edges. */
export const toEditorGraph = (definition: Readonly<Record<string, unknown>>): EditorGraph => {
  const nodes = Array.isArray(definition.nodes) ? definition.nodes.filter(isRecord) : []
  const edges = Array.isArray(definition.edges) ? definition.edges.filter(isRecord) : []
  return {
    nodes: nodes.map((node, index) => ({
      id: String(node.id),
      type: node.type as NodeType,
      position: isPosition(node.position) ? { x: node.position.x, y: node.position.y } : gridPosition(index),
      data: { fields: isRecord(node.data) ? node.data : {}, extra: without(node, NODE_KEYS) }
    })),
    edges: edges.map((edge) => {
      const fields: EdgeFields = isRecord(edge.data) ? edge.data : {}
      return {
        id: String(edge.id),
        source: String(edge.source),
        target: String(edge.target),
        ...(fields.label ? { label: fields.label } : {}),
        data: { fields, extra: without(edge, EDGE_KEYS) }
      }
    }),
    extra: without(definition as Json, ["nodes", "edges"])
  }
}

/** The editor's graph as the `workflow_definition` the API stores; display state is left out. */
export const toDefinition = (graph: EditorGraph): Record<string, unknown> => ({
  ...graph.extra,
  nodes: graph.nodes.map((node) => ({
    ...node.data.extra,
    id: node.id,
    type: node.type,
    position: { x: node.position.x, y: node.position.y },
    data: node.data.fields
  })),
  edges: graph.edges.map((edge) => ({
    ...(edge.data?.extra ?? {}),
    id: edge.id,
    source: edge.source,
    target: edge.target,
    data: edge.data?.fields ?? {}
  }))
})

/** What a node of each type starts with when added: enough to see what to fill in. */
export const newNodeFields = (type: NodeType): NodeFields => {
  switch (type) {
    case "startCall":
      return { name: "Start", prompt: "", greeting_type: "text", greeting: "", allow_interrupt: true }
    case "agentNode":
      return { name: "Step", prompt: "", allow_interrupt: true }
    case "endCall":
      return { name: "End", prompt: "" }
    case "globalNode":
      return { name: "Global", prompt: "" }
    case "webhook":
      return { name: "Webhook", enabled: true, http_method: "POST", endpoint_url: "", payload_template: {} }
    case "trigger":
      return { name: "API Trigger", enabled: true, trigger_path: "" }
    case "qa":
      return { name: "QA Review", qa_enabled: true, qa_use_workflow_llm: true, qa_sample_rate: 100 }
  }
}

/**
 * The server's validation problems placed on the nodes and edges they concern. Nodes and edges
 * without any keep their identity, so React Flow redraws only what changed (200-node graphs).
 */
export const withProblems = (
  graph: { readonly nodes: Array<GraphNode>; readonly edges: Array<GraphEdge> },
  problems: ReadonlyArray<
    { readonly kind: string; readonly id: string | null; readonly message: string; readonly field: string | null }
  >
) => {
  const on = (kind: string, id: string) =>
    problems
      .filter((problem) => problem.kind === kind && problem.id === id)
      .map((problem) => (problem.field ? `${problem.field}: ${problem.message}` : problem.message))
  return {
    nodes: graph.nodes.map((node) => {
      const found = on("node", node.id)
      return found.length === 0 ? node : { ...node, data: { ...node.data, problems: found } }
    }),
    edges: graph.edges.map((edge) => {
      const found = on("edge", edge.id)
      return found.length === 0
        ? edge
        : { ...edge, data: { fields: {}, extra: {}, ...edge.data, problems: found }, className: "has-problem" }
    })
  }
}
