import { Either, type Schema } from "effect"
import { checkExtraction, checkGreeting, checkReferences, checkTransitionSpeech } from "./contentRules.ts"
import { decodeAll, describe, dotted, issuesOf, type Path, record } from "./decodeIssues.ts"
import {
  DefinitionEnvelope,
  EdgeData,
  EdgeEnvelope,
  nodeDataSchemas,
  NodeEnvelope,
  NodeTypes,
  SIDE_NODE_TYPES,
  type SideNode,
  type WorkflowEdge,
  type WorkflowGraph,
  type WorkflowNode
} from "./definition.ts"
import type { EdgeEntry, NodeEntry } from "./graphEntries.ts"
import { checkKnowledge } from "./knowledgeRules.ts"
import type { GraphProblem } from "./problem.ts"
import { checkWebhookCredentials } from "./sideNodeRules.ts"
import type { KnownTool } from "./toolReferences.ts"
import { checkTools } from "./toolRules.ts"
import { checkTopology } from "./topologyRules.ts"

export interface GraphValidation {
  /** Every problem found, in definition order; empty when the definition can run. */
  readonly problems: ReadonlyArray<GraphProblem>
  /** The typed graph, present only when there are no problems. */
  readonly graph: WorkflowGraph | null
}

export interface ValidationOptions {
  /**
   * The organization's recording ids. When given, every clip the graph names (audio greeting,
   * audio transition speech) must be one of them; the caller looks them up, validation stays pure.
   */
  readonly recordingIds?: ReadonlySet<string> | undefined
  /**
   * The organization's library tools the graph names, by `tool_uuid`. When given, every
   * `tool_uuids` entry must be one of them and not archived, and offered under a name no edge of
   * its node takes.
   */
  readonly tools?: ReadonlyMap<string, KnownTool> | undefined
  /**
   * The organization's knowledge-base documents the graph names, by lowercased `document_uuid`.
   * When given, every `document_uuids` entry must be one of them.
   */
  readonly documents?: ReadonlySet<string> | undefined
  /** The organization's credentials the webhook nodes name, by `credential_uuid`. */
  readonly credentials?: ReadonlySet<string> | undefined
}

/** Validates a `workflow_definition` against every rule at once (docs/architecture.md, "Agents"). */
export const validateDefinition = (definition: unknown, options: ValidationOptions = {}): GraphValidation => {
  const problems: Array<GraphProblem> = []
  const workflowProblem = (path: Path, rule: string, message: string, stage: GraphProblem["stage"]) =>
    problems.push({ kind: "workflow", id: null, field: path.length ? dotted(path) : null, path, rule, message, stage })
  const nodeProblem = (
    node: { index: number; id: string | null; type?: string },
    field: Path,
    rule: string,
    message: string,
    stage: GraphProblem["stage"] = "readiness"
  ) =>
    problems.push({
      kind: "node",
      id: node.id,
      field: field.length ? dotted(field) : null,
      path: ["nodes", node.index, ...field],
      rule,
      message: `Node ${node.id === null ? `#${node.index}` : `"${node.id}"`}${
        node.type ? ` (${node.type})` : ""
      }: ${message}`,
      stage
    })
  const edgeProblem = (
    edge: { index: number; id: string | null },
    field: Path,
    rule: string,
    message: string,
    stage: GraphProblem["stage"] = "readiness"
  ) =>
    problems.push({
      kind: "edge",
      id: edge.id,
      field: field.length ? dotted(field) : null,
      path: ["edges", edge.index, ...field],
      rule,
      message: `Edge ${edge.id === null ? `#${edge.index}` : `"${edge.id}"`}: ${message}`,
      stage
    })

  const top = decodeAll(DefinitionEnvelope, definition)
  if (Either.isLeft(top)) {
    if (record(definition) !== definition) {
      workflowProblem(
        [],
        "definition_shape",
        "workflow_definition must be an object with nodes and edges arrays",
        "structure"
      )
    } else {
      for (const issue of issuesOf(top.left)) {
        workflowProblem(issue.path, "definition_shape", describe(dotted(issue.path), issue), "structure")
      }
    }
    return { problems, graph: null }
  }

  const nodes: Array<NodeEntry> = []
  top.right.nodes.forEach((raw, index) => {
    const rawId = record(raw)["id"]
    const ref = { index, id: typeof rawId === "string" && rawId !== "" ? rawId : null }
    const envelope = decodeAll(NodeEnvelope, raw)
    if (Either.isLeft(envelope)) {
      for (const issue of issuesOf(envelope.left)) {
        const unknownType = issue.path[0] === "type" && issue._tag !== "Missing"
        nodeProblem(
          ref,
          issue.path,
          unknownType ? "node_type_unknown" : "node_shape",
          unknownType
            ? `type must be one of ${NodeTypes.join(", ")}`
            : describe(dotted(issue.path), issue),
          "structure"
        )
      }
      return
    }
    nodes.push({ index, id: envelope.right.id, type: envelope.right.type, rawData: envelope.right.data, data: null })
  })

  const edges: Array<EdgeEntry> = []
  top.right.edges.forEach((raw, index) => {
    const rawId = record(raw)["id"]
    const ref = { index, id: typeof rawId === "string" && rawId !== "" ? rawId : null }
    const envelope = decodeAll(EdgeEnvelope, raw)
    if (Either.isLeft(envelope)) {
      for (const issue of issuesOf(envelope.left)) {
        edgeProblem(ref, issue.path, "edge_shape", describe(dotted(issue.path), issue), "structure")
      }
      return
    }
    const { id, source, target, data } = envelope.right
    const entry: EdgeEntry = { index, id, source, target, data: null }
    const decoded = decodeAll(EdgeData, data)
    if (Either.isLeft(decoded)) {
      for (const issue of issuesOf(decoded.left)) {
        edgeProblem(entry, ["data", ...issue.path], "edge_data", describe(`data.${dotted(issue.path)}`, issue))
      }
    } else {
      entry.data = decoded.right
    }
    checkReferences(
      data,
      ["data"],
      (field, message) => edgeProblem(entry, field, "template_reference_malformed", message)
    )
    checkTransitionSpeech(
      data,
      (field, rule, message) => edgeProblem(entry, field, rule, message),
      options.recordingIds
    )
    edges.push(entry)
  })

  const nodesById = new Map<string, NodeEntry>()
  for (const node of nodes) {
    if (nodesById.has(node.id)) {
      nodeProblem(node, ["id"], "node_id_duplicate", `id "${node.id}" is used by another node`, "structure")
    } else nodesById.set(node.id, node)
  }
  const edgeIds = new Set<string>()
  for (const edge of edges) {
    if (edgeIds.has(edge.id)) {
      edgeProblem(edge, ["id"], "edge_id_duplicate", `id "${edge.id}" is used by another edge`, "structure")
    }
    edgeIds.add(edge.id)
    for (const end of ["source", "target"] as const) {
      if (!nodesById.has(edge[end])) {
        edgeProblem(
          edge,
          [end],
          "edge_endpoint_missing",
          `${end} "${edge[end]}" is not a node of this workflow`,
          "structure"
        )
      }
    }
  }

  for (const node of nodes) {
    const decoded = decodeAll(nodeDataSchemas[node.type] as Schema.Schema<unknown, unknown>, node.rawData)
    if (Either.isLeft(decoded)) {
      for (const issue of issuesOf(decoded.left)) {
        nodeProblem(node, ["data", ...issue.path], "node_data", describe(`data.${dotted(issue.path)}`, issue))
      }
    } else {
      node.data = decoded.right
    }
    checkExtraction(node, (field, rule, message) => nodeProblem(node, field, rule, message))
    checkGreeting(node, (field, rule, message) => nodeProblem(node, field, rule, message), options.recordingIds)
    checkReferences(
      node.rawData,
      ["data"],
      (field, message) => nodeProblem(node, field, "template_reference_malformed", message)
    )
  }

  checkTools(nodes, edges, (node, field, rule, message) => nodeProblem(node, field, rule, message), options.tools)
  checkKnowledge(nodes, (node, field, rule, message) => nodeProblem(node, field, rule, message), options.documents)
  checkWebhookCredentials(
    nodes,
    (node, field, rule, message) => nodeProblem(node, field, rule, message),
    options.credentials
  )
  checkTopology(nodes, edges, nodesById, { workflowProblem, nodeProblem, edgeProblem })

  if (problems.length > 0) return { problems, graph: null }
  return {
    problems,
    graph: {
      nodes: nodes.filter((node) => !SIDE_NODE_TYPES.includes(node.type)).map((node) =>
        ({ id: node.id, type: node.type, data: node.data }) as WorkflowNode
      ),
      sideNodes: nodes.filter((node) => SIDE_NODE_TYPES.includes(node.type)).map((node) =>
        ({ id: node.id, type: node.type, data: node.data }) as SideNode
      ),
      edges: edges.map((edge): WorkflowEdge => ({
        id: edge.id,
        source: edge.source,
        target: edge.target,
        data: edge.data!
      }))
    }
  }
}

/** Problems that keep a value from being stored even as a draft. */
export const structureProblems = (problems: ReadonlyArray<GraphProblem>) =>
  problems.filter((problem) => problem.stage === "structure")
