import type { WorkflowNode } from "../graph/definition.ts"

/**
 * The model connection at `node`: a node's own `llm_model` and `llm_temperature` win over the
 * agent's overrides and the organization's settings (already in `connection`); the provider,
 * its address and key stay the organization's. After a failure the caller's fallback model
 * (`modelIsFallback`) keeps its place: a node's own model is the one that may have failed.
 */
export const connectionAt = <C extends { readonly model: string; readonly temperature?: number | undefined }>(
  connection: C,
  node: WorkflowNode,
  modelIsFallback = false
): C => {
  if (node.type === "globalNode") return connection
  const { llm_model, llm_temperature } = node.data
  if (llm_model === undefined && llm_temperature === undefined) return connection
  return {
    ...connection,
    ...(llm_model !== undefined && !modelIsFallback ? { model: llm_model } : {}),
    ...(llm_temperature !== undefined ? { temperature: llm_temperature } : {})
  }
}
