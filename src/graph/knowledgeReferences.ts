import { record } from "./decodeIssues.ts"

/** Every `document_uuids` entry of a raw definition's nodes (lowercased), for looking the documents up before validating. */
export const definitionDocumentUuids = (definition: unknown): Set<string> => {
  const uuids = new Set<string>()
  const nodes = record(definition)["nodes"]
  if (!Array.isArray(nodes)) return uuids
  for (const node of nodes) {
    const listed = record(record(node)["data"])["document_uuids"]
    if (Array.isArray(listed)) {
      for (const uuid of listed) if (typeof uuid === "string") uuids.add(uuid.toLowerCase())
    }
  }
  return uuids
}
