import type { Path } from "./decodeIssues.ts"
import type { NodeEntry } from "./graphEntries.ts"

const listedDocuments = (node: NodeEntry): Array<unknown> =>
  Array.isArray(node.rawData["document_uuids"]) ? node.rawData["document_uuids"] : []

/**
 * Rules on the knowledge-base documents a node names: each listed once and, when the caller looked
 * them up (validation stays pure), each a document of the organization — another organization's
 * uuid is as unknown as a made-up one. `knowledge_retrieval: "auto"` needs documents to search: the
 * node's own, or the global node's when it takes the global prompt.
 */
export const checkKnowledge = (
  nodes: ReadonlyArray<NodeEntry>,
  report: (node: NodeEntry, field: Path, rule: string, message: string) => void,
  documents?: ReadonlySet<string>
) => {
  const global = nodes.find((node) => node.type === "globalNode")
  const globalListed = global ? listedDocuments(global).length > 0 : false
  for (const node of nodes) {
    if (node.type === "endCall") continue
    const listed = listedDocuments(node)
    const seen = new Set<string>()
    listed.forEach((uuid, index) => {
      if (typeof uuid !== "string") return
      const field: Path = ["data", "document_uuids", index]
      const key = uuid.toLowerCase()
      if (seen.has(key)) report(node, field, "document_duplicate", `document ${uuid} is listed twice`)
      seen.add(key)
      if (documents && !documents.has(key)) {
        report(
          node,
          field,
          "document_unknown",
          `document_uuids[${index}] "${uuid}" is not a document of this organization's knowledge base; upload it at /api/v1/knowledge-base/upload-url`
        )
      }
    })
    const inherits = node.type !== "globalNode" && node.rawData["add_global_prompt"] !== false && globalListed
    if (node.rawData["knowledge_retrieval"] === "auto" && listed.length === 0 && !inherits) {
      report(
        node,
        ["data", "knowledge_retrieval"],
        "knowledge_retrieval_without_documents",
        node.type === "globalNode"
          ? "knowledge_retrieval is auto but the global node lists no document_uuids to search"
          : "knowledge_retrieval is auto but there are no documents to search: list document_uuids on this node or on the global node"
      )
    }
  }
}
