import { JSONSchema } from "effect"
import { HTTPError, HTTPValidationError, V2ErrorResponse } from "./errors.ts"

type Spec = Record<string, any>

const SCHEMAS = "#/components/schemas/"

const componentsOf = () => {
  const defs: Record<string, any> = {}
  for (const schema of [HTTPError, HTTPValidationError, V2ErrorResponse]) {
    JSONSchema.fromAST(schema.ast, { definitions: defs, definitionPath: SCHEMAS, target: "openApi3.1" })
  }
  return defs
}

const jsonRef = (name: string) => ({ content: { "application/json": { schema: { $ref: `${SCHEMAS}${name}` } } } })

const refsIn = (value: unknown, found: Set<string>) => {
  if (Array.isArray(value)) {
    for (const item of value) refsIn(item, found)
  } else if (typeof value === "object" && value !== null) {
    for (const [key, item] of Object.entries(value)) {
      if (key === "$ref" && typeof item === "string" && item.startsWith(SCHEMAS)) found.add(item.slice(SCHEMAS.length))
      else refsIn(item, found)
    }
  }
}

/**
 * The domain error schemas the platform registered are replaced by the bodies actually sent, so
 * they (and whatever only they used) would stay behind as components nothing refers to.
 */
const referencedSchemas = (spec: Spec): Record<string, unknown> => {
  const schemas: Record<string, unknown> = spec.components.schemas
  const reached = new Set<string>()
  refsIn(spec.paths, reached)
  const pending = [...reached]
  while (pending.length > 0) {
    const inner = new Set<string>()
    refsIn(schemas[pending.pop()!], inner)
    for (const name of inner) {
      if (!reached.has(name)) {
        reached.add(name)
        pending.push(name)
      }
    }
  }
  return Object.fromEntries(Object.entries(schemas).filter(([name]) => reached.has(name)))
}

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
  spec.components.schemas = referencedSchemas(spec)
  return spec
}
