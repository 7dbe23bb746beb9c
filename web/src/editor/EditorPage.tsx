import {
  addEdge,
  applyEdgeChanges,
  applyNodeChanges,
  Background,
  type Connection,
  Controls,
  type EdgeChange,
  MiniMap,
  type NodeChange,
  ReactFlow
} from "@xyflow/react"
import "@xyflow/react/dist/style.css"
import { type ChangeEvent, useCallback, useEffect, useMemo, useRef, useState } from "react"
import type { NodeType } from "../../../src/graph/definition.ts"
import { download, exportedAgent, importedAgent, type JsonObject } from "../agentFile.ts"
import { loadAgent } from "../agentPrefetch.ts"
import { api, type Schemas } from "../api/client.ts"
import { ApiProblem, messageOf, ok } from "../api/problems.ts"
import { navigate } from "../router.tsx"
import { useLoad } from "../useLoad.ts"
import { CallPanel } from "./CallPanel.tsx"
import { ChatPanel } from "./ChatPanel.tsx"
import {
  type EdgeFields,
  type EditorGraph,
  type GraphEdge,
  type GraphNode,
  newNodeFields,
  type NodeFields,
  toDefinition,
  toEditorGraph,
  withProblems
} from "./graphConversion.ts"
import { GraphNodeCard, nodeTypeLabels } from "./GraphNodeCard.tsx"
import { EdgePanel, NodePanel } from "./SidePanel.tsx"
import { VersionsPanel } from "./VersionsPanel.tsx"

type Workflow = Schemas["WorkflowResponse"]
type ValidationProblem = Schemas["WorkflowValidationResponse"]["errors"][number]

const nodeTypes = {
  startCall: GraphNodeCard,
  agentNode: GraphNodeCard,
  endCall: GraphNodeCard,
  globalNode: GraphNodeCard
}
const addable: ReadonlyArray<NodeType> = ["startCall", "agentNode", "endCall", "globalNode"]

/** How many nodes the first view of a big graph shows. */
const OPENING_NODES = 30

const newId = (prefix: string) => `${prefix}-${crypto.randomUUID().slice(0, 8)}`

/** The graph editor for one agent, with its versions and a chat to try it. */
const EditorPage = ({ agentId }: { readonly agentId: number }) => {
  const [loaded] = useLoad(() => loadAgent(agentId), [agentId])
  if (loaded.state === "loading") return <p role="status">Loading the agent…</p>
  if (loaded.state === "failed") return <p className="problem" role="alert">{loaded.message}</p>
  return <Editor initial={loaded.value} />
}

const Editor = ({ initial }: { readonly initial: Workflow }) => {
  const [workflow, setWorkflow] = useState(initial)
  const [name, setName] = useState(initial.name)
  const start = useMemo(() => toEditorGraph(initial.workflow_definition), [initial])
  const [nodes, setNodes] = useState<Array<GraphNode>>(start.nodes)
  const [edges, setEdges] = useState<Array<GraphEdge>>(start.edges)
  const extra = useRef(start.extra)
  const [dirty, setDirty] = useState(false)
  const [problems, setProblems] = useState<ReadonlyArray<ValidationProblem>>([])
  const [status, setStatus] = useState<{ readonly text: string; readonly failed?: boolean }>()
  const [busy, setBusy] = useState(false)
  const [activeNode, setActiveNode] = useState<string>()
  /** "Try it" by voice rather than by chat. */
  const [calling, setCalling] = useState(false)
  const [showVersions, setShowVersions] = useState(false)

  // A big graph opens on its first nodes at a readable size rather than shrunk to fit: only what is
  // on screen is drawn, so it is interactive at once; the minimap and zoom reach the rest.
  const openingView = useMemo(
    () =>
      start.nodes.length > OPENING_NODES
        ? { nodes: start.nodes.slice(0, OPENING_NODES).map((node) => ({ id: node.id })), maxZoom: 1 }
        : { maxZoom: 1 },
    [start]
  )

  const graph = (): EditorGraph => ({ nodes, edges, extra: extra.current })

  const validate = useCallback(async () => {
    const result = await ok(api.POST("/api/v1/workflow/{workflow_id}/validate", {
      params: { path: { workflow_id: initial.id } }
    }))
    setProblems(result.errors)
    return result
  }, [initial.id])

  useEffect(() => {
    validate().catch(() => undefined)
  }, [validate])

  const shown = useMemo(() => {
    const placed = withProblems({ nodes, edges }, problems)
    return {
      nodes: placed.nodes.map((
        node
      ) => (node.id === activeNode ? { ...node, data: { ...node.data, active: true } } : node)),
      edges: placed.edges
    }
  }, [nodes, edges, problems, activeNode])
  const workflowProblems = problems.filter((problem) => problem.kind === "workflow")

  const onNodesChange = useCallback((changes: Array<NodeChange<GraphNode>>) => {
    setNodes((current) => applyNodeChanges(changes, current))
    if (changes.some((change) => change.type === "position" || change.type === "remove" || change.type === "add")) {
      setDirty(true)
    }
  }, [])
  const onEdgesChange = useCallback((changes: Array<EdgeChange<GraphEdge>>) => {
    setEdges((current) => applyEdgeChanges(changes, current))
    if (changes.some((change) => change.type === "remove" || change.type === "add")) setDirty(true)
  }, [])
  const onConnect = useCallback((connection: Connection) => {
    const fields: EdgeFields = { label: "next", condition: "" }
    setEdges((current) =>
      addEdge<GraphEdge>(
        { ...connection, id: newId("edge"), label: fields.label, data: { fields, extra: {} }, selected: true },
        current.map((edge): GraphEdge => ({ ...edge, selected: false }))
      )
    )
    setNodes((current) => current.map((node) => ({ ...node, selected: false })))
    setDirty(true)
  }, [])

  const addNode = (type: NodeType) => {
    const last = nodes.at(-1)?.position ?? { x: 0, y: 0 }
    const node: GraphNode = {
      id: newId(type),
      type,
      position: { x: last.x + 40, y: last.y + 140 },
      data: { fields: newNodeFields(type), extra: {} },
      selected: true
    }
    setNodes((current): Array<GraphNode> => [...current.map((n) => ({ ...n, selected: false })), node])
    setEdges((current) => current.map((edge) => ({ ...edge, selected: false })))
    setDirty(true)
  }

  const selectedNode = nodes.find((node) => node.selected)
  const selectedEdge = selectedNode ? undefined : edges.find((edge) => edge.selected)
  const problemsOf = <T extends { id: string }>(list: ReadonlyArray<T>, id: string) => list.find((x) => x.id === id)

  const changeNode = (id: string, fields: NodeFields) => {
    setNodes((current) => current.map((node) => (node.id === id ? { ...node, data: { ...node.data, fields } } : node)))
    setDirty(true)
  }
  const changeEdge = (id: string, fields: EdgeFields) => {
    setEdges((current) =>
      current.map((edge) =>
        edge.id === id
          ? { ...edge, label: fields.label ?? "", data: { extra: {}, ...edge.data, fields } }
          : edge
      )
    )
    setDirty(true)
  }
  const deleteNode = (id: string) => {
    setNodes((current) => current.filter((node) => node.id !== id))
    setEdges((current) => current.filter((edge) => edge.source !== id && edge.target !== id))
    setDirty(true)
  }
  const deleteEdge = (id: string) => {
    setEdges((current) => current.filter((edge) => edge.id !== id))
    setDirty(true)
  }

  const act = async (label: string, action: () => Promise<string | undefined>) => {
    setBusy(true)
    setStatus({ text: `${label}…` })
    try {
      const done = await action()
      if (done) setStatus({ text: done })
    } catch (error) {
      setStatus({ text: messageOf(error), failed: true })
      if (error instanceof ApiProblem && error.status === 422) await validate().catch(() => undefined)
    }
    setBusy(false)
  }

  const saveDraft = async () => {
    const saved = await ok(api.PUT("/api/v1/workflow/{workflow_id}", {
      params: { path: { workflow_id: initial.id } },
      body: { name, workflow_definition: toDefinition(graph()) as JsonObject }
    }))
    setWorkflow(saved)
    setDirty(false)
    const result = await validate()
    return result.is_valid
      ? `Draft v${saved.version_number} saved.`
      : `Draft v${saved.version_number} saved; ${result.errors.length} problem(s) to fix before publishing.`
  }

  const publish = async () => {
    if (dirty || workflow.version_status !== "draft") await saveDraft()
    const published = await ok(api.POST("/api/v1/workflow/{workflow_id}/publish", {
      params: { path: { workflow_id: initial.id } }
    }))
    setWorkflow(published)
    setProblems([])
    return `Version ${published.version_number} published.`
  }

  const duplicate = async () => {
    const copy = await ok(api.POST("/api/v1/workflow/{workflow_id}/duplicate", {
      params: { path: { workflow_id: initial.id } }
    }))
    navigate(`/agents/${copy.id}`)
    return undefined
  }

  const replaceGraph = (definition: Readonly<Record<string, unknown>>) => {
    const next = toEditorGraph(definition)
    setNodes(next.nodes)
    setEdges(next.edges)
    extra.current = next.extra
    setDirty(true)
  }

  const importFile = async (event: ChangeEvent<HTMLInputElement>) => {
    const file = event.target.files?.[0]
    event.target.value = ""
    if (!file) return
    try {
      replaceGraph(importedAgent(await file.text(), file.name).workflow_definition)
      setStatus({ text: `Imported ${file.name}. Save the draft to keep it.` })
    } catch (error) {
      setStatus({ text: `Import failed: ${messageOf(error)}`, failed: true })
    }
  }

  const exportFile = () => {
    const body = exportedAgent({ ...workflow, name, workflow_definition: toDefinition(graph()) as JsonObject })
    download(`${name.replace(/[^\w.-]+/g, "_") || "agent"}.json`, JSON.stringify(body, null, 2))
  }

  const nodeName = (id: string) => String(problemsOf(nodes, id)?.data.fields.name ?? id)

  return (
    <section className="editor" aria-label={`Editor for ${name}`}>
      <div className="editor-toolbar">
        <label className="agent-name">
          <span className="visually-hidden">Agent name</span>
          <input
            value={name}
            onChange={(e) => {
              setName(e.target.value)
              setDirty(true)
            }}
          />
        </label>
        <span className="badge">
          v{workflow.version_number} {workflow.version_status}
          {dirty ? " · unsaved changes" : ""}
        </span>
        <div className="actions" role="group" aria-label="Add a node">
          {addable.map((type) => (
            <button key={type} type="button" className="secondary" onClick={() => addNode(type)}>
              + {nodeTypeLabels[type]}
            </button>
          ))}
        </div>
        <div className="actions">
          <button type="button" className="secondary" disabled={busy} onClick={() => act("Saving", saveDraft)}>
            Save draft
          </button>
          <button type="button" disabled={busy} onClick={() => act("Publishing", publish)}>Publish</button>
          <button
            type="button"
            className="secondary"
            onClick={() => setShowVersions((v) => !v)}
            aria-expanded={showVersions}
          >
            Versions
          </button>
          <button type="button" className="secondary" disabled={busy} onClick={() => act("Duplicating", duplicate)}>
            Duplicate
          </button>
          <button type="button" className="secondary" onClick={exportFile}>Export JSON</button>
          <label className="button secondary">
            Import JSON
            <input type="file" accept="application/json,.json" className="visually-hidden" onChange={importFile} />
          </label>
        </div>
      </div>
      {status && (
        <p className={status.failed ? "problem" : "notice"} role={status.failed ? "alert" : "status"}>{status.text}</p>
      )}
      {workflowProblems.length > 0 && (
        <ul className="problem" aria-label="Problems with the agent">
          {workflowProblems.map((problem) => <li key={problem.rule + problem.message}>{problem.message}</li>)}
        </ul>
      )}
      <div className="editor-body">
        <div className="canvas" aria-label="Agent graph">
          <ReactFlow
            nodes={shown.nodes}
            edges={shown.edges}
            nodeTypes={nodeTypes}
            onNodesChange={onNodesChange}
            onEdgesChange={onEdgesChange}
            onConnect={onConnect}
            deleteKeyCode={["Backspace", "Delete"]}
            fitView
            fitViewOptions={openingView}
            minZoom={0.1}
            onlyRenderVisibleElements
          >
            <Background />
            <Controls />
            <MiniMap pannable zoomable ariaLabel="Overview of the graph" />
          </ReactFlow>
        </div>
        <aside className="editor-side">
          {showVersions && (
            <VersionsPanel
              agentId={initial.id}
              onOpen={(version) => {
                replaceGraph(version.workflow_definition)
                setStatus({ text: `Version ${version.version_number} loaded. Save the draft to keep it.` })
              }}
            />
          )}
          {selectedNode && (
            <NodePanel
              key={selectedNode.id}
              node={shown.nodes.find((node) => node.id === selectedNode.id) ?? selectedNode}
              onChange={(fields) => changeNode(selectedNode.id, fields)}
              onDelete={() => deleteNode(selectedNode.id)}
            />
          )}
          {selectedEdge && (
            <EdgePanel
              key={selectedEdge.id}
              edge={shown.edges.find((edge) => edge.id === selectedEdge.id) ?? selectedEdge}
              onChange={(fields) => changeEdge(selectedEdge.id, fields)}
              onDelete={() => deleteEdge(selectedEdge.id)}
            />
          )}
          {!selectedNode && !selectedEdge && !showVersions && (
            <p className="hint">
              Select a node or a transition to edit it. Drag from a node's bottom handle to another node to connect
              them.
            </p>
          )}
          {calling
            ? (
              <CallPanel
                agentId={initial.id}
                nodeName={nodeName}
                onNode={setActiveNode}
                onClose={() => setCalling(false)}
              />
            )
            : (
              <ChatPanel
                agentId={initial.id}
                nodeName={nodeName}
                onNode={setActiveNode}
                onCall={() => setCalling(true)}
              />
            )}
        </aside>
      </div>
    </section>
  )
}

export default EditorPage
