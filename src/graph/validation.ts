import { Either, ParseResult, Schema } from "effect"
import {
  DefinitionEnvelope,
  EdgeData,
  EdgeEnvelope,
  nodeDataSchemas,
  NodeEnvelope,
  type NodeType,
  type WorkflowEdge,
  type WorkflowGraph,
  type WorkflowNode
} from "./definition.ts"
import type { GraphProblem } from "./problem.ts"
import { malformedReferences } from "./templateVariables.ts"
import { RESERVED_TOOL_NAMES, TOOL_NAME_MAX_LENGTH, toolNameFor } from "./toolName.ts"

export interface GraphValidation {
  /** Every problem found, in definition order; empty when the definition can run. */
  readonly problems: ReadonlyArray<GraphProblem>
  /** The typed graph, present only when there are no problems. */
  readonly graph: WorkflowGraph | null
}

type Path = ReadonlyArray<string | number>

const decodeAll = <A, I>(schema: Schema.Schema<A, I>, value: unknown) =>
  Schema.decodeUnknownEither(schema, { errors: "all", onExcessProperty: "preserve" })(value)

/**
 * Decode issues, one per field: a value that matches no member of a union is reported once per
 * member by the formatter, so those are merged into a single "Expected a | b" message.
 */
const issuesOf = (error: ParseResult.ParseError) => {
  const byPath = new Map<string, Array<{ _tag: string; path: Array<string | number>; message: string }>>()
  for (const issue of ParseResult.ArrayFormatter.formatErrorSync(error)) {
    const path = issue.path.map((part): string | number => (typeof part === "number" ? part : String(part)))
    const key = JSON.stringify(path)
    byPath.set(key, [...(byPath.get(key) ?? []), { _tag: issue._tag, path, message: issue.message }])
  }
  return [...byPath.values()].map((group) => {
    const expected = group.map((issue) => /^Expected (.+), actual (.+)$/s.exec(issue.message))
    if (group.length > 1 && expected.every((match) => match !== null)) {
      const options = [...new Set(expected.map((match) => match![1]))].join(" | ")
      return { ...group[0]!, message: `Expected ${options}, actual ${expected[0]![2]}` }
    }
    return group[0]!
  })
}

const dotted = (path: Path): string =>
  path.reduce<string>(
    (text, part) => (typeof part === "number" ? `${text}[${part}]` : text ? `${text}.${part}` : part),
    ""
  )

const record = (value: unknown): Record<string, unknown> =>
  value !== null && typeof value === "object" && !Array.isArray(value) ? (value as Record<string, unknown>) : {}

interface NodeEntry {
  readonly index: number
  readonly id: string
  readonly type: NodeType
  readonly rawData: Record<string, unknown>
  data: unknown
}

interface EdgeEntry {
  readonly index: number
  readonly id: string
  readonly source: string
  readonly target: string
  data: EdgeData | null
}

export interface ValidationOptions {
  /**
   * The organization's recording ids. When given, every clip the graph names (audio greeting,
   * audio transition speech) must be one of them; the caller looks them up, validation stays pure.
   */
  readonly recordingIds?: ReadonlySet<string> | undefined
}

/** Validates a `workflow_definition` against every rule at once (ARCHITECTURE "Agents"). */
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
  const describe = (field: string, issue: { _tag: string; message: string }) =>
    issue._tag === "Missing"
      ? `${field} is required`
      : /^[A-Z]/.test(issue.message)
      ? `${field}: ${issue.message}`
      : `${field} ${issue.message}`

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
            ? `type must be one of startCall, agentNode, endCall, globalNode`
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

  checkTopology(nodes, edges, nodesById, { workflowProblem, nodeProblem, edgeProblem })

  if (problems.length > 0) return { problems, graph: null }
  return {
    problems,
    graph: {
      nodes: nodes.map((node) => ({ id: node.id, type: node.type, data: node.data }) as WorkflowNode),
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

const checkReferences = (value: unknown, path: Path, report: (field: Path, message: string) => void) => {
  if (typeof value === "string") {
    for (const bad of malformedReferences(value)) {
      report(
        path,
        `${dotted(path)} has a malformed template reference ${JSON.stringify(bad)}; use {{name}} or {{name | default}}`
      )
    }
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => checkReferences(item, [...path, index], report))
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) checkReferences(item, [...path, key], report)
  }
}

const checkExtraction = (node: NodeEntry, report: (field: Path, rule: string, message: string) => void) => {
  if (node.type === "globalNode") return
  const variables = Array.isArray(node.rawData["extraction_variables"]) ? node.rawData["extraction_variables"] : []
  if (node.rawData["extraction_enabled"] === true && variables.length === 0) {
    report(
      ["data", "extraction_variables"],
      "extraction_variables_missing",
      "extraction is enabled but no extraction_variables are defined"
    )
  }
  const seen = new Set<string>()
  variables.forEach((variable, index) => {
    const name = record(variable)["name"]
    if (typeof name !== "string") return
    if (seen.has(name)) {
      report(
        ["data", "extraction_variables", index, "name"],
        "extraction_variable_duplicate",
        `extraction variable "${name}" is defined twice`
      )
    }
    seen.add(name)
  })
}

const checkGreeting = (
  node: NodeEntry,
  report: (field: Path, rule: string, message: string) => void,
  recordingIds?: ReadonlySet<string>
) => {
  if (node.type !== "startCall" || node.rawData["greeting_type"] !== "audio") return
  const recording = node.rawData["greeting_recording_id"]
  if (typeof recording !== "string" || recording.trim() === "") {
    report(
      ["data", "greeting_recording_id"],
      "greeting_recording_missing",
      "greeting_type is audio but greeting_recording_id is empty"
    )
  } else checkRecording(recording, ["data", "greeting_recording_id"], report, recordingIds)
}

const checkTransitionSpeech = (
  data: Record<string, unknown>,
  report: (field: Path, rule: string, message: string) => void,
  recordingIds?: ReadonlySet<string>
) => {
  if (data["transition_speech_type"] !== "audio") return
  const recording = data["transition_speech_recording_id"]
  if (typeof recording !== "string" || recording.trim() === "") {
    report(
      ["data", "transition_speech_recording_id"],
      "transition_recording_missing",
      "transition_speech_type is audio but transition_speech_recording_id is empty"
    )
  } else checkRecording(recording, ["data", "transition_speech_recording_id"], report, recordingIds)
}

const checkRecording = (
  recording: string,
  field: Path,
  report: (field: Path, rule: string, message: string) => void,
  recordingIds?: ReadonlySet<string>
) => {
  if (recordingIds && !recordingIds.has(recording.trim())) {
    report(
      field,
      "recording_unknown",
      `${
        dotted(field)
      } "${recording}" is not a recording of this organization; upload it at /api/v1/workflow-recordings first`
    )
  }
}

interface Reporters {
  readonly workflowProblem: (path: Path, rule: string, message: string, stage: GraphProblem["stage"]) => void
  readonly nodeProblem: (node: NodeEntry, field: Path, rule: string, message: string) => void
  readonly edgeProblem: (edge: EdgeEntry, field: Path, rule: string, message: string) => void
}

/** Counts, degrees, reachability and tool names: the rules that make a graph runnable. */
const checkTopology = (
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
