/**
 * v2 names things as its clients know them: what v1 and the services call a workflow is an
 * agent here. Error messages built from a service's resource name are renamed to match.
 */
const V2_RESOURCE_NAMES: Readonly<Record<string, string>> = { Workflow: "Agent" }

interface Failure {
  readonly _tag: string
  readonly message: string
  readonly resource?: unknown
  readonly id?: unknown
}

/** The message v2 answers for a domain error. */
export const v2MessageOf = (error: Failure): string => {
  if (error._tag !== "NotFound" || typeof error.resource !== "string") return error.message
  const renamed = V2_RESOURCE_NAMES[error.resource]
  return renamed === undefined ? error.message : `${renamed} ${String(error.id)} not found`
}
