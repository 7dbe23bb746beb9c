import { JSONSchema } from "effect"
import { HTTPError, HTTPValidationError, V2ErrorResponse } from "./errors.ts"

type Spec = Record<string, any>

const componentsOf = () => {
  const defs: Record<string, any> = {}
  for (const schema of [HTTPError, HTTPValidationError, V2ErrorResponse]) {
    JSONSchema.fromAST(schema.ast, { definitions: defs, target: "openApi3.1" })
  }
  return defs
}

const jsonRef = (name: string) => ({ content: { "application/json": { schema: { $ref: `#/components/schemas/${name}` } } } })

/**
 * The generated document describes errors by their domain schemas; clients see the shapes
 * `errorShape.ts` renders. Rewrite every error response to the body actually sent, drop the
 * platform's default 400 (decode errors are answered as 422), and list 422 wherever input is read.
 */
export const describeErrorBodies = (spec: Spec): Spec => {
  spec.components ??= {}
  spec.components.schemas = { ...spec.components.schemas, ...componentsOf() }
  for (const [path, operations] of Object.entries<Record<string, any>>(spec.paths ?? {})) {
    const v2 = path.startsWith("/api/v2")
    for (const operation of Object.values<any>(operations)) {
      if (typeof operation !== "object" || operation === null || !operation.responses) continue
      const responses = operation.responses as Record<string, any>
      delete responses["400"]
      const readsInput = (operation.parameters?.length ?? 0) > 0 || operation.requestBody !== undefined
      if (readsInput && !responses["422"]) responses["422"] = { description: "Validation Error" }
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) < 400) continue
        const body = v2 ? "ErrorResponse" : status === "422" ? "HTTPValidationError" : "HTTPError"
        responses[status] = { description: response.description ?? "Error", ...jsonRef(body) }
      }
    }
  }
  return spec
}
