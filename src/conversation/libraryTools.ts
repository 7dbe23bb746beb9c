import type { WorkflowGraph, WorkflowNode } from "../graph/definition.ts"
import { CALCULATOR_PARAMETERS } from "../tools/calculator.ts"
import { CURRENT_TIME_PARAMETERS } from "../tools/currentTime.ts"
import { expandMcpTool, mcpParameters } from "../tools/mcpTools.ts"
import { SEND_DTMF_PARAMETERS } from "../tools/sendDtmf.ts"
import { parametersSchema } from "../tools/toolArguments.ts"
import type { RunnableTool } from "../tools/toolRun.ts"
import { transferParameters } from "../tools/transferCall.ts"
import type { ToolDefinition } from "./tools.ts"

/**
 * The library tools the model may call at `node`: its own `tool_uuids`, then the global node's
 * when the node takes the global prompt. A tool no longer runnable (archived or deleted since
 * the graph was validated) is left out, as is one whose name `taken` already holds. An MCP
 * server's tool stands for each of the server's tools it offers, under namespaced names, narrowed
 * to those the node (or, for the global node's tools, the global node) picks in `mcp_tools`.
 */
export const libraryToolsAt = (
  graph: WorkflowGraph,
  node: WorkflowNode,
  runnable: ReadonlyMap<string, RunnableTool>,
  taken: ReadonlySet<string>
): Map<string, RunnableTool> => {
  const offered = new Map<string, RunnableTool>()
  if (node.type === "endCall" || runnable.size === 0) return offered
  const global = graph.nodes.find((candidate) => candidate.type === "globalNode")
  const sources = [node]
  if (global && global.type === "globalNode" && node.type !== "globalNode" && node.data.add_global_prompt !== false) {
    sources.push(global)
  }
  for (const source of sources) {
    for (const uuid of source.data.tool_uuids ?? []) {
      const tool = runnable.get(uuid)
      if (!tool) continue
      const chosen = source.data.mcp_tools?.[uuid]
      for (const each of expandMcpTool(tool)) {
        if (chosen && each.mcpTool && !chosen.includes(each.mcpTool.name)) continue
        if (!taken.has(each.name) && !offered.has(each.name)) offered.set(each.name, each)
      }
    }
  }
  return offered
}

/** A library tool as the model is offered it: its name, its description, its arguments' JSON Schema. */
export const offeredTool = (tool: RunnableTool): ToolDefinition => {
  const { definition } = tool
  const parameters = definition.type === "http_api"
    ? parametersSchema(definition.config.parameters ?? [])
    : definition.type === "calculator"
    ? CALCULATOR_PARAMETERS
    : definition.type === "current_time"
    ? CURRENT_TIME_PARAMETERS
    : definition.type === "send_dtmf"
    ? SEND_DTMF_PARAMETERS
    : definition.type === "transfer_call"
    ? transferParameters(definition.config)
    : definition.type === "mcp" && tool.mcpTool
    ? mcpParameters(tool.mcpTool)
    : { type: "object", properties: {} }
  return { name: tool.name, description: tool.description, parameters }
}
