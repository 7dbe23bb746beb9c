import { Validator } from "@seriousme/openapi-schema-validator"
import { createRequire } from "node:module"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { client } from "./support/client.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let spec: any

beforeAll(async () => {
  server = await startServer()
  const reply = await client(server.url).get("/openapi.json")
  expect(reply.status).toBe(200)
  spec = reply.body
})
afterAll(() => server?.close())

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"]

const operations = (): Array<{ method: string; path: string; operation: any }> =>
  Object.entries<any>(spec.paths).flatMap(([path, item]) =>
    METHODS.filter((method) => item[method]).map((method) => ({ method, path, operation: item[method] }))
  )

/** A schema with its `$ref`s and `allOf` wrappers followed, and a nullable `anyOf` reduced to its non-null member. */
const resolved = (schema: any): any => {
  if (schema?.$ref) {
    return resolved({ ...spec.components.schemas[schema.$ref.split("/").pop()], ...without(schema, "$ref") })
  }
  if (schema?.allOf?.length === 1) return resolved({ ...schema.allOf[0], ...without(schema, "allOf") })
  if (Array.isArray(schema?.anyOf)) {
    const present = schema.anyOf.filter((member: any) => member.type !== "null")
    if (present.length === 1) return resolved(present[0])
  }
  return schema
}
const without = (schema: any, key: string) =>
  Object.fromEntries(Object.entries(schema).filter(([name]) => name !== key))

/** Every named property of every object schema in the document, with where it was found. */
const properties = (): Array<{ where: string; name: string; schema: any }> => {
  const found: Array<{ where: string; name: string; schema: any }> = []
  const walk = (node: any, where: string) => {
    if (Array.isArray(node)) return node.forEach((item, index) => walk(item, `${where}/${index}`))
    if (typeof node !== "object" || node === null) return
    if (node.type === "object" && node.properties) {
      for (const [name, schema] of Object.entries(node.properties)) found.push({ where, name, schema })
    }
    for (const [key, value] of Object.entries(node)) walk(value, `${where}/${key}`)
  }
  walk(spec, "#")
  return found
}

describe("the OpenAPI document", () => {
  it("is a valid OpenAPI 3.1 document whose references all resolve", async () => {
    const validator = new Validator()
    // The validator resolves references in place; the other tests read the document as served.
    const result = await validator.validate(structuredClone(spec))
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
    expect(() => validator.resolveRefs()).not.toThrow()
    expect(spec.openapi).toMatch(/^3\.1\./)
  })

  it("carries the product's version", () => {
    expect(spec.info.version).toBe(createRequire(import.meta.url)("../package.json").version)
  })

  it("gives every operation a summary, a description and a declared tag", () => {
    const tags = new Set(spec.tags.map((tag: any) => tag.name))
    expect(spec.tags.every((tag: any) => typeof tag.description === "string" && tag.description.length > 0)).toBe(true)
    const undocumented = operations()
      .filter(({ operation }) =>
        !(operation.summary?.length > 0) || !(operation.description?.length > 0) || operation.tags?.length !== 1 ||
        !tags.has(operation.tags[0])
      )
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`)
    expect(undocumented).toEqual([])
    expect(operations().length).toBeGreaterThanOrEqual(67)
  })

  it("declares every path parameter of every operation, required and typed", () => {
    const problems: Array<string> = []
    for (const { method, path, operation } of operations()) {
      const inPath = [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1])
      const declared = (operation.parameters ?? []).filter((parameter: any) => parameter.in === "path")
      for (const name of inPath) {
        const parameter = declared.find((candidate: any) => candidate.name === name)
        if (!parameter) problems.push(`${method.toUpperCase()} ${path}: {${name}} not declared`)
        else if (
          parameter.required !== true || !resolved(parameter.schema)?.type && !resolved(parameter.schema)?.enum
        ) {
          problems.push(`${method.toUpperCase()} ${path}: {${name}} not required or untyped`)
        }
      }
    }
    expect(problems).toEqual([])
    const ids = operations().flatMap(({ operation }) => operation.parameters ?? []).filter((parameter: any) =>
      /_id$|^id$/.test(parameter.name) && parameter.in === "path"
    )
    expect(
      ids.filter((parameter: any) => parameter.name !== "id" || resolved(parameter.schema).type !== "string").every((
        parameter: any
      ) => resolved(parameter.schema).type === "integer")
    ).toBe(true)
  })

  it("declares the query parameters, e.g. the seven of the usage runs list", () => {
    const runs = spec.paths["/api/v1/organizations/usage/runs"].get
    const query = Object.fromEntries(
      runs.parameters.filter((parameter: any) => parameter.in === "query").map((
        parameter: any
      ) => [parameter.name, parameter])
    )
    expect(Object.keys(query).sort()).toEqual([
      "end_date",
      "filters",
      "limit",
      "page",
      "sort_by",
      "sort_order",
      "start_date"
    ])
    expect(query.page.schema).toMatchObject({ type: "integer", minimum: 1 })
    expect(query.limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100 })
    expect(Object.values(query).every((parameter: any) => parameter.required === false)).toBe(true)
    const keys = spec.paths["/api/v1/user/api-keys"].get.parameters
    expect(keys).toContainEqual(
      expect.objectContaining({
        name: "include_archived",
        in: "query",
        schema: expect.objectContaining({ type: "boolean" })
      })
    )
    const workflows = spec.paths["/api/v1/workflow/fetch"].get.parameters
    expect(workflows).toContainEqual(expect.objectContaining({ name: "status", in: "query" }))
  })

  it("types ids and counts as integers and timestamps as date-time strings", () => {
    const integral = /^(id|page|limit|page_size)$|^(?!is_).*_id$|_count$|^total_(count|pages|items|runs|rows)$|_rows$/
    const timestamp = /_at$|^(ts|time|at)$/
    const wrong: Array<string> = []
    for (const { where, name, schema } of properties()) {
      const type = resolved(schema)
      if (where.includes("HTTPValidationError") || where.includes("ValidationError")) continue
      if (
        integral.test(name) && type.type !== "integer" && !(name === "id" && type.type === "string") &&
        !(name.endsWith("_id") && type.type === "string")
      ) {
        wrong.push(`${where} ${name}: ${JSON.stringify(type)}`)
      }
      if (timestamp.test(name) && !(type.type === "string" && type.format === "date-time")) {
        wrong.push(`${where} ${name}: ${JSON.stringify(type)}`)
      }
    }
    expect(wrong).toEqual([])
    expect(resolved(spec.components.schemas.CampaignResponse.properties.id)).toMatchObject({ type: "integer" })
    expect(resolved(spec.components.schemas.CampaignResponse.properties.created_at)).toMatchObject({
      type: "string",
      format: "date-time"
    })
  })
})
