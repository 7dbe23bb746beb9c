import { api } from "./api/client.ts"
import { ok } from "./api/problems.ts"

const pending = new Map<number, ReturnType<typeof fetchAgent>>()

const fetchAgent = (id: number) =>
  ok(api.GET("/api/v1/workflow/fetch/{workflow_id}", { params: { path: { workflow_id: id } } }))

/**
 * Starts loading an agent while the editor's code is still on its way, so the two downloads
 * overlap instead of following each other.
 */
export const prefetchAgent = (id: number) => {
  if (!pending.has(id)) pending.set(id, fetchAgent(id))
}

/** The prefetched agent (once), else a fresh request. */
export const loadAgent = (id: number) => {
  const prefetched = pending.get(id)
  pending.delete(id)
  return prefetched ?? fetchAgent(id)
}
