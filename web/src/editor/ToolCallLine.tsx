import type { Schemas } from "../api/client.ts"

/** One tool the agent called, as a line of the conversation: the transition it took, or the end of the call. */
export const ToolCallLine = (
  { call, nodeName }: { readonly call: Schemas["ToolCallTaken"]; readonly nodeName: (id: string) => string }
) => (
  <li className="tool-call">
    <span className="tool-name">{call.name}</span>
    {call.to_node_id === null
      ? " ends the conversation"
      : ` moves from ${nodeName(call.from_node_id)} to ${nodeName(call.to_node_id)}`}
  </li>
)
