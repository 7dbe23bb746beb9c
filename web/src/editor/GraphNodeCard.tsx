import { Handle, type NodeProps, Position } from "@xyflow/react"
import type { GraphNode } from "./graphConversion.ts"

export const nodeTypeLabels = {
  startCall: "Start",
  agentNode: "Agent step",
  endCall: "End call",
  globalNode: "Global",
  webhook: "Webhook",
  trigger: "API trigger",
  qa: "QA review"
} as const

/** One node on the canvas: its type, name, the start of its prompt, and any problem the server found. */
export const GraphNodeCard = ({ data, type, selected }: NodeProps<GraphNode>) => {
  const problems = data.problems ?? []
  const takesEdgesIn = type === "agentNode" || type === "endCall"
  const sendsEdgesOut = type === "agentNode" || type === "startCall"
  return (
    <div
      className={`graph-node ${type}${data.active ? " active" : ""}${problems.length > 0 ? " has-problem" : ""}${
        selected ? " selected" : ""
      }`}
      data-testid={`node-${data.fields.name ?? ""}`}
    >
      {takesEdgesIn && <Handle type="target" position={Position.Top} />}
      <div className="graph-node-type">{nodeTypeLabels[type]}</div>
      <div className="graph-node-name">{data.fields.name || <em>unnamed</em>}</div>
      {data.fields.prompt && <div className="graph-node-prompt">{String(data.fields.prompt).slice(0, 80)}</div>}
      {data.active && <div className="graph-node-live">conversation is here</div>}
      {problems.length > 0 && (
        <ul className="graph-node-problems" aria-label="Problems">
          {problems.map((problem) => <li key={problem}>{problem}</li>)}
        </ul>
      )}
      {sendsEdgesOut && <Handle type="source" position={Position.Bottom} />}
    </div>
  )
}
