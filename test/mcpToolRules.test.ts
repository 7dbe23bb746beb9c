import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { libraryToolsAt } from "../src/conversation/libraryTools.ts"
import type { KnownTool } from "../src/graph/toolReferences.ts"
import { validateDefinition } from "../src/graph/validation.ts"
import {
  expandMcpTool,
  keptCatalogEntry,
  mcpFunctionName,
  mcpParameters,
  mcpResultText
} from "../src/tools/mcpTools.ts"
import { type McpConfig, mcpTimeoutMs, ToolDefinition } from "../src/tools/toolDefinition.ts"
import { callChangesSomething, type RunnableTool } from "../src/tools/toolRun.ts"
import { runnableDefinition } from "./support/workflowGraphs.ts"

const server = (config: Partial<McpConfig>): RunnableTool => ({
  uuid: "5f0c1a3e-8d2b-4c55-9a1e-2b7f3c4d5e6f",
  name: "shop",
  description: "The shop",
  definition: { type: "mcp", config: { transport: "streamable_http", url: "https://mcp.example.com/mcp", ...config } }
})

describe("MCP tool names", () => {
  it("namespaces a server's tool under its library tool's name, slugged and bounded to 64 characters", () => {
    expect(mcpFunctionName("Shop orders", "lookUp.Order")).toBe("mcp__shop_orders__lookup_order")
    expect(mcpFunctionName("Shop", "!!!")).toBe("mcp__shop__tool")
    const long = mcpFunctionName("A".repeat(100), "b".repeat(100))
    expect(long.length).toBe(64)
    expect(long.startsWith("mcp__aaaa")).toBe(true)
    // The server's part is cut before the tool's, so two tools of one long-named server stay apart.
    expect(mcpFunctionName("A".repeat(100), "first")).not.toBe(mcpFunctionName("A".repeat(100), "second"))
  })

  it("expands a server into the tools its filter offers, leaving out a second tool whose name slugs the same", () => {
    const discovered = [
      {
        name: "look_up",
        description: "Finds an order",
        inputSchema: { type: "object", properties: {} },
        read_only: true
      },
      { name: "Look-Up", description: null },
      { name: "book", description: null }
    ]
    const all = expandMcpTool(server({ discovered_tools: discovered }))
    expect(all.map((tool) => [tool.name, tool.description, tool.mcpTool?.name])).toEqual([
      ["mcp__shop__look_up", "Finds an order", "look_up"],
      ["mcp__shop__book", "book (The shop)", "book"]
    ])
    const filtered = expandMcpTool(server({ discovered_tools: discovered, tools_filter: ["book"] }))
    expect(filtered.map((tool) => tool.name)).toEqual(["mcp__shop__book"])
    expect(expandMcpTool(server({}))).toEqual([])
    expect(callChangesSomething(all[0]!)).toBe(false)
    expect(callChangesSomething(all[1]!)).toBe(true)
  })

  it("offers a tool's input schema only when it is an object schema", () => {
    expect(mcpParameters({ name: "x", inputSchema: { type: "object", properties: { a: { type: "string" } } } }))
      .toEqual({ type: "object", properties: { a: { type: "string" } } })
    expect(mcpParameters({ name: "x", inputSchema: { type: "string" } })).toEqual({ type: "object", properties: {} })
    expect(mcpParameters({ name: "x" })).toEqual({ type: "object", properties: {} })
  })
})

describe("MCP catalogs", () => {
  it("keeps what a server lists within bounds: no overlong names, cut descriptions, small object schemas only", () => {
    expect(keptCatalogEntry({ name: "x".repeat(201) })).toBeNull()
    expect(keptCatalogEntry({ name: "" })).toBeNull()
    const kept = keptCatalogEntry({
      name: "find",
      description: "d".repeat(5000),
      inputSchema: { type: "object", properties: { q: { type: "string", description: "q".repeat(30_000) } } },
      annotations: { readOnlyHint: true }
    })
    expect(kept?.description?.length).toBe(2000)
    expect(kept?.inputSchema).toEqual({ type: "object", properties: {} })
    expect(kept?.read_only).toBe(true)
    expect(keptCatalogEntry({ name: "list", inputSchema: [1, 2] })).toEqual({
      name: "list",
      description: null,
      inputSchema: { type: "object", properties: {} }
    })
  })
})

describe("MCP results and settings", () => {
  it("reads text content, embedded resources' text, and structured content when there is no text", () => {
    expect(mcpResultText({
      content: [
        { type: "text", text: "First" },
        { type: "image", data: "…", mimeType: "image/png" },
        { type: "resource", resource: { uri: "file:///a", text: "Inside" } },
        { type: "resource_link", uri: "file:///b", name: "b" }
      ]
    })).toBe("First\n[image image/png content omitted]\nInside\n[resource file:///b]")
    expect(mcpResultText({ content: [], structuredContent: { ok: true } })).toBe("{\"ok\":true}")
    expect(mcpResultText({})).toBe("")
  })

  it("takes timeout_ms, else Dograh's timeout_secs bounded to 30 s, else 10 s", () => {
    const base = { transport: "streamable_http" as const, url: "https://x.example" }
    expect(mcpTimeoutMs({ ...base, timeout_ms: 1500, timeout_secs: 60 })).toBe(1500)
    expect(mcpTimeoutMs({ ...base, timeout_secs: 60 })).toBe(30_000)
    expect(mcpTimeoutMs({ ...base, timeout_secs: 5 })).toBe(5_000)
    expect(mcpTimeoutMs({ ...base, timeout_secs: 0 })).toBe(10_000)
    expect(mcpTimeoutMs(base)).toBe(10_000)
  })

  it("decodes Dograh's mcp definition, defaulting the transport, and refuses an unknown one", () => {
    const decode = Schema.decodeUnknownEither(ToolDefinition)
    const dograh = decode({
      schema_version: 1,
      type: "mcp",
      config: { url: "https://mcp.example.com/mcp", tools_filter: [], timeout_secs: 30, sse_read_timeout_secs: 300 }
    })
    expect(dograh._tag).toBe("Right")
    expect(dograh._tag === "Right" && dograh.right.type === "mcp" && dograh.right.config.transport).toBe(
      "streamable_http"
    )
    expect(decode({ type: "mcp", config: { url: "https://x", transport: "websocket" } })._tag).toBe("Left")
  })
})

describe("MCP tools picked per node", () => {
  const uuid = "5f0c1a3e-8d2b-4c55-9a1e-2b7f3c4d5e6f"
  const calculatorUuid = "0b1c2d3e-4f50-4a61-8b72-93a4b5c6d7e8"
  const catalog = [{ name: "look_up", description: null }, { name: "book", description: null }, {
    name: "cancel",
    description: null
  }]
  const withTools = (start: Record<string, unknown>, global: Record<string, unknown> = {}) => {
    const definition = runnableDefinition()
    Object.assign(definition.nodes[0]!.data, start)
    Object.assign(definition.nodes[3]!.data, global)
    return definition
  }
  const known = new Map<string, KnownTool>([
    [uuid, {
      name: "shop",
      status: "active",
      serverTools: catalog.map((tool) => ({ name: tool.name, functionName: mcpFunctionName("shop", tool.name) }))
    }],
    [calculatorUuid, { name: "calculator", status: "active" }]
  ])
  const runnable = new Map<string, RunnableTool>([[uuid, server({ discovered_tools: catalog })]])

  it("offers only the server tools a node picks, and the global node's picks for the tools it lends", () => {
    const graph = validateDefinition(
      withTools({ tool_uuids: [uuid], mcp_tools: { [uuid]: ["book"] } }),
      { tools: known }
    ).graph!
    const start = graph.nodes.find((node) => node.id === "start")!
    expect([...libraryToolsAt(graph, start, runnable, new Set()).keys()]).toEqual(["mcp__shop__book"])

    const lent = validateDefinition(
      withTools({}, { tool_uuids: [uuid], mcp_tools: { [uuid]: ["look_up", "cancel"] } }),
      { tools: known }
    ).graph!
    const qualify = lent.nodes.find((node) => node.id === "qualify")!
    expect([...libraryToolsAt(lent, qualify, runnable, new Set()).keys()]).toEqual([
      "mcp__shop__look_up",
      "mcp__shop__cancel"
    ])
    const unpicked = validateDefinition(withTools({ tool_uuids: [uuid] }), { tools: known }).graph!
    expect(libraryToolsAt(unpicked, unpicked.nodes[0]!, runnable, new Set()).size).toBe(3)
  })

  it("refuses picks for a tool the node does not list or that is no MCP server, and checks names only of the picks", () => {
    const rules = (start: Record<string, unknown>) =>
      validateDefinition(withTools(start), { tools: known }).problems.map((problem) => [problem.rule, problem.path])
    expect(rules({ tool_uuids: [], mcp_tools: { [uuid]: ["book"] } })).toEqual([
      ["mcp_tools_unlisted", ["nodes", 0, "data", "mcp_tools", uuid]]
    ])
    expect(rules({ tool_uuids: [calculatorUuid], mcp_tools: { [calculatorUuid]: ["x"] } })).toEqual([
      ["mcp_tools_not_mcp", ["nodes", 0, "data", "mcp_tools", calculatorUuid]]
    ])
    // A second server under the same name offering `book`: a conflict only while the node offers both.
    const otherUuid = "9a8b7c6d-5e4f-4a3b-8c2d-1e0f9a8b7c6d"
    const withOther = new Map(known).set(otherUuid, {
      name: "shop",
      status: "active",
      serverTools: [{ name: "book", functionName: mcpFunctionName("shop", "book") }]
    })
    const conflicting = (picks?: ReadonlyArray<string>) =>
      validateDefinition(
        withTools({ tool_uuids: [uuid, otherUuid], ...(picks ? { mcp_tools: { [uuid]: picks } } : {}) }),
        { tools: withOther }
      ).problems.map((problem) => problem.rule)
    expect(conflicting()).toEqual(["tool_name_conflict"])
    expect(conflicting(["look_up"])).toEqual([])
  })
})
