import type { components } from "./api/schema.ts"

type CreateWorkflowRequest = components["schemas"]["CreateWorkflowRequest"]
type WorkflowResponse = components["schemas"]["WorkflowResponse"]
/** A free-form JSON object as the API documents it (definitions, context variables). */
export type JsonObject = CreateWorkflowRequest["workflow_definition"]

/** What "Export JSON" writes: the body "Import JSON" sends back to create the same agent. */
export const exportedAgent = (workflow: WorkflowResponse): CreateWorkflowRequest => ({
  name: workflow.name,
  workflow_definition: workflow.workflow_definition,
  ...(workflow.template_context_variables ? { template_context_variables: workflow.template_context_variables } : {}),
  ...(workflow.workflow_configurations ? { workflow_configurations: workflow.workflow_configurations } : {})
})

/** Reads an exported agent, or a bare `{nodes, edges}` definition named after its file. */
export const importedAgent = (text: string, fileName: string): CreateWorkflowRequest => {
  const parsed: unknown = JSON.parse(text)
  if (typeof parsed !== "object" || parsed === null) throw new Error("The file does not hold a JSON object.")
  const record = parsed as Record<string, unknown>
  if ("workflow_definition" in record) return record as unknown as CreateWorkflowRequest
  if ("nodes" in record) return { name: fileName.replace(/\.json$/i, ""), workflow_definition: record as JsonObject }
  throw new Error("The file holds neither an exported agent nor a definition with nodes and edges.")
}

export const download = (fileName: string, content: string, type = "application/json") => {
  const url = URL.createObjectURL(new Blob([content], { type }))
  const link = Object.assign(document.createElement("a"), { href: url, download: fileName })
  link.click()
  URL.revokeObjectURL(url)
}
