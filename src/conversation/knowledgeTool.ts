import type { WorkflowGraph, WorkflowNode } from "../graph/definition.ts"
import type { ChunkSearchResult } from "../knowledge/knowledgeDocument.ts"
import type { ToolDefinition } from "./tools.ts"

/** The tool the model searches the knowledge base with (Dograh names its `retrieve_from_knowledge_base`). */
export const KNOWLEDGE_TOOL = "search_knowledge_base"

/** Passages the model is given per search: enough to answer, few enough for a voice turn's prompt. */
export const KNOWLEDGE_PASSAGES = 3

/**
 * The documents the model may search at `node`: its own `document_uuids`, then the global node's
 * when the node takes the global prompt; none (no tool offered) when neither names any.
 */
export const knowledgeDocumentsAt = (graph: WorkflowGraph, node: WorkflowNode): ReadonlyArray<string> => {
  if (node.type === "endCall") return []
  const global = graph.nodes.find((candidate) => candidate.type === "globalNode")
  const inherited = global && global.type === "globalNode" && node.type !== "globalNode" &&
      node.data.add_global_prompt !== false
    ? global.data.document_uuids ?? []
    : []
  return [...new Set([...(node.data.document_uuids ?? []), ...inherited].map((uuid) => uuid.toLowerCase()))]
}

export const knowledgeToolDefinition = (documents: number): ToolDefinition => ({
  name: KNOWLEDGE_TOOL,
  description:
    `Search the company's documents (${documents} available) for facts, policies, prices, hours or procedures before answering a question about them. Answer only from the passages found; say so when nothing relevant is found.`,
  parameters: {
    type: "object",
    properties: {
      query: {
        type: "string",
        description: "What to look up, in natural language, e.g. 'What is the refund policy for cancelled orders?'"
      }
    },
    required: ["query"],
    additionalProperties: false
  }
})

/** The query the model asked for, or why its arguments are unusable. */
export const knowledgeQueryOf = (text: string): { readonly query: string } | { readonly problem: string } => {
  try {
    const value: unknown = JSON.parse(text)
    const query = value !== null && typeof value === "object" ? (value as Record<string, unknown>)["query"] : undefined
    return typeof query === "string" && query.trim() !== ""
      ? { query: query.trim().slice(0, 2000) }
      : { problem: "\"query\" (a non-empty string) is required" }
  } catch {
    return { problem: "the arguments must be a JSON object with \"query\"" }
  }
}

/** Where a passage came from, as the transcript shows it. */
export const sourceOf = (chunk: ChunkSearchResult["chunks"][number]) => ({
  document_uuid: chunk.document_uuid,
  filename: chunk.filename,
  page: typeof chunk.chunk_metadata["page"] === "number" ? chunk.chunk_metadata["page"] : null,
  heading: typeof chunk.chunk_metadata["heading"] === "string" ? chunk.chunk_metadata["heading"] : null,
  chunk_index: chunk.chunk_index,
  similarity: chunk.similarity
})

/** What the model is told: each passage with its source, so it can say where an answer comes from. */
export const knowledgeResultText = (result: ChunkSearchResult): string =>
  result.chunks.length === 0
    ? "No passage of the knowledge base matches this query."
    : result.chunks.map((chunk, index) => {
      const source = sourceOf(chunk)
      const where = [source.filename, source.page === null ? null : `page ${source.page}`, source.heading]
        .filter((part) => part !== null).join(", ")
      return `[${index + 1}] (${where})\n${chunk.chunk_text}`
    }).join("\n\n")
