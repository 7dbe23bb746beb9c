import { record } from "./decodeIssues.ts"
import type { Path } from "./decodeIssues.ts"
import type { NodeEntry } from "./graphEntries.ts"

/** Every webhook node's `credential_uuid` in a raw definition, for looking the credentials up before validating. */
export const definitionCredentialUuids = (definition: unknown): Set<string> => {
  const uuids = new Set<string>()
  const nodes = record(definition)["nodes"]
  if (!Array.isArray(nodes)) return uuids
  for (const node of nodes) {
    if (record(node)["type"] !== "webhook") continue
    const uuid = record(record(node)["data"])["credential_uuid"]
    if (typeof uuid === "string" && uuid !== "") uuids.add(uuid)
  }
  return uuids
}

/** Every trigger node's `trigger_path` in a raw definition (checked for use by another agent before saving). */
export const definitionTriggerPaths = (definition: unknown): Set<string> => {
  const paths = new Set<string>()
  const nodes = record(definition)["nodes"]
  if (!Array.isArray(nodes)) return paths
  for (const node of nodes) {
    if (record(node)["type"] !== "trigger") continue
    const path = record(record(node)["data"])["trigger_path"]
    if (typeof path === "string" && path !== "") paths.add(path)
  }
  return paths
}

/**
 * A webhook's credential must be one of the organization's (when the caller looked them up:
 * validation stays pure); another organization's uuid is as unknown as a made-up one.
 */
export const checkWebhookCredentials = (
  nodes: ReadonlyArray<NodeEntry>,
  report: (node: NodeEntry, field: Path, rule: string, message: string) => void,
  credentials?: ReadonlySet<string>
) => {
  if (!credentials) return
  for (const node of nodes) {
    if (node.type !== "webhook") continue
    const uuid = node.rawData["credential_uuid"]
    if (typeof uuid === "string" && uuid !== "" && !credentials.has(uuid)) {
      report(
        node,
        ["data", "credential_uuid"],
        "credential_unknown",
        `credential_uuid "${uuid}" is not a credential of this organization; create it at /api/v1/credentials`
      )
    }
  }
}
