import type { WorkflowGraph, WorkflowNode } from "../graph/definition.ts"
import type { ChunkSearchResult } from "../knowledge/knowledgeDocument.ts"
import { knowledgeResultText } from "./knowledgeTool.ts"

/**
 * How long an automatic search may wait for the hybrid ranking (the embeddings endpoint) before a
 * full-text search is started beside it; whichever answers first is used.
 */
export const FULL_TEXT_AFTER_MS = 400

/** The most a caller's turn waits for its passages: past this the model answers without them. */
export const AUTO_RETRIEVAL_BUDGET_MS = 1200

/**
 * How the model gets the documents at `node`: its own `knowledge_retrieval`, else the global node's
 * when the node takes the global prompt, else `tool`.
 */
export const knowledgeRetrievalAt = (graph: WorkflowGraph, node: WorkflowNode): "tool" | "auto" => {
  if (node.type === "endCall") return "tool"
  if (node.data.knowledge_retrieval !== undefined) return node.data.knowledge_retrieval
  const global = graph.nodes.find((candidate) => candidate.type === "globalNode")
  const inherits = global && global.type === "globalNode" && node.type !== "globalNode" &&
    node.data.add_global_prompt !== false
  return (inherits ? global.data.knowledge_retrieval : undefined) ?? "tool"
}

/** What the node's instructions are followed by: the passages found for the caller's last message, with their sources. */
export const knowledgeContextText = (result: ChunkSearchResult): string =>
  result.chunks.length === 0
    ? "No passage of the company's documents matches the caller's last message; do not guess facts the documents would hold."
    : [
      "Passages of the company's documents found for the caller's last message. Answer from them when they cover the question; say so when they do not.",
      knowledgeResultText(result)
    ].join("\n\n")
