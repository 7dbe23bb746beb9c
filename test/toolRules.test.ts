import { describe, expect, it } from "vitest"
import { evaluate } from "../src/tools/calculator.ts"
import { buildToolRequest, hostOf, resolvePresets, urlTemplateProblem } from "../src/tools/httpToolRequest.ts"
import { checkArguments } from "../src/tools/toolArguments.ts"
import type { HttpApiConfig } from "../src/tools/toolDefinition.ts"
import { atPointer, truncatedForModel } from "../src/tools/toolResult.ts"

describe("calculator", () => {
  it("follows arithmetic precedence, right-associative powers and unary minus", () => {
    expect(evaluate("2 + 3 * 4")).toEqual({ ok: true, value: 14 })
    expect(evaluate("2 ^ 3 ^ 2")).toEqual({ ok: true, value: 512 })
    expect(evaluate("-2 ^ 2")).toEqual({ ok: true, value: -4 })
    expect(evaluate("(1 + 2) * -3")).toEqual({ ok: true, value: -9 })
    expect(evaluate("max(1, 7, 3) % 4 + sqrt(16) + round(2.345, 2)")).toEqual({ ok: true, value: 9.35 })
    expect(evaluate("10 / 4 + pi * 0")).toEqual({ ok: true, value: 2.5 })
  })

  it("refuses what is not arithmetic, and results that are not finite", () => {
    expect(evaluate("1 / 0")).toEqual({ ok: false, error: "division by zero" })
    expect(evaluate("2 +")).toMatchObject({ ok: false })
    expect(evaluate("(1")).toMatchObject({ ok: false, error: "expected \")\"" })
    expect(evaluate("toString()")).toMatchObject({ ok: false, error: "unknown name \"tostring\"" })
    expect(evaluate("this.constructor")).toMatchObject({ ok: false })
    expect(evaluate("10 ^ 400")).toEqual({ ok: false, error: "the result is not a finite number" })
    expect(evaluate("1".repeat(501))).toMatchObject({ ok: false })
  })
})

describe("HTTP tool requests", () => {
  it("refuses URL templates whose scheme or host is a placeholder, and names the host of the others", () => {
    expect(urlTemplateProblem("https://{{host}}/x")).toContain("scheme and host must be written out")
    expect(urlTemplateProblem("{{base}}/x")).toContain("scheme and host must be written out")
    expect(urlTemplateProblem("https://api.example.com:8443/{{a}}?q={{b}}")).toBeNull()
    expect(urlTemplateProblem("https://user:pw@api.example.com/")).toContain("credentials")
    expect(hostOf("https://API.example.com:8443/{{a}}")).toBe("api.example.com:8443")
  })

  it("resolves presets to their declared types from the conversation's variables", () => {
    const variables = { initial_context: { age: 42, tags: ["a"] }, gathered_context: { vip: true }, name: "Ada" }
    expect(resolvePresets([
      { name: "age", type: "number", value_template: "{{initial_context.age}}", required: true },
      { name: "tags", type: "array", value_template: "{{initial_context.tags}}", required: true },
      { name: "vip", type: "boolean", value_template: "{{gathered_context.vip}}", required: true },
      { name: "greeting", type: "string", value_template: "Dear {{name}}", required: true },
      { name: "missing", type: "string", value_template: "{{nope}}", required: false }
    ], variables)).toEqual({
      _tag: "Resolved",
      values: { age: 42, tags: ["a"], vip: true, greeting: "Dear Ada" }
    })
    expect(resolvePresets([{ name: "n", type: "number", value_template: "{{name}}", required: true }], variables))
      .toEqual({ _tag: "Unresolved", problems: ["preset \"n\" is not a number"] })
  })

  it("puts what the URL does not use in the query for GET and in the body for POST", () => {
    const base: HttpApiConfig = { method: "GET", url: "https://api.example.com/orders/{{id}}" }
    expect(buildToolRequest(base, { id: "a b", page: 2 }, {})).toMatchObject({
      url: "https://api.example.com/orders/a%20b?page=2",
      body: undefined
    })
    expect(buildToolRequest({ ...base, method: "POST" }, { id: "7", note: "x" }, {})).toMatchObject({
      url: "https://api.example.com/orders/7",
      body: { note: "x" },
      headers: { "content-type": "application/json" }
    })
  })

  it("checks the model's arguments against the parameters before anything is sent", () => {
    const parameters = [
      { name: "id", type: "string" as const, description: "", required: true },
      { name: "count", type: "number" as const, description: "", required: false }
    ]
    expect(checkArguments(parameters, "{\"id\":\"x\",\"count\":2}")).toEqual({
      _tag: "Valid",
      values: { id: "x", count: 2 }
    })
    expect(checkArguments(parameters, "not json")).toEqual({
      _tag: "Invalid",
      problems: ["the arguments are not valid JSON"]
    })
    expect(checkArguments(parameters, "[1]")).toMatchObject({ _tag: "Invalid" })
  })
})

describe("answers for the model", () => {
  it("follows RFC 6901 pointers and cuts long text with a note", () => {
    const document = { "a/b": { "m~n": [10, 20] } }
    expect(atPointer(document, "/a~1b/m~0n/1")).toBe(20)
    expect(atPointer(document, "/a~1b/m~0n/01")).toBeUndefined()
    expect(atPointer(document, "")).toBe(document)
    expect(truncatedForModel("abcdef", 3)).toEqual({
      text: "abc\n[truncated: the answer had 6 characters; only the first 3 are shown]",
      truncated: true
    })
  })
})
