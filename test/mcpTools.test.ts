import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { type LoopbackMcp, startLoopbackMcp } from "./support/loopbackMcp.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let mcp: LoopbackMcp
let guarded: LoopbackMcp

const TOKEN = "mcp-secret-token-0123456789"

beforeAll(async () => {
  llm = await startScriptedLlm()
  mcp = await startLoopbackMcp()
  guarded = await startLoopbackMcp({ token: TOKEN })
  server = await startServer()
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await llm?.close()
  await mcp?.close()
  await guarded?.close()
})

beforeEach(() => llm.reset())

const TOOLS = "/api/v1/tools"

const mcpTool = (url: string, config: Record<string, unknown> = {}, name = "Orders") => ({
  name,
  description: "The shop's order system",
  definition: { type: "mcp", config: { url, ...config } }
})

const createTool = async (account: TestAccount, body: Record<string, unknown>) => {
  const created = await api.post(TOOLS, body, { token: account.token })
  if (created.status !== 200) throw new Error(`tool creation failed: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body
}

const bearer = async (account: TestAccount, host: string, token = TOKEN) => {
  const created = await api.post("/api/v1/credentials", {
    name: `MCP ${Math.random().toString(36).slice(2, 8)}`,
    credential_type: "bearer_token",
    credential_data: { token },
    host
  }, { token: account.token })
  expect(created.status).toBe(200)
  return created.body.uuid as string
}

const toolNames = (tool: any) => (tool.definition.config.discovered_tools as Array<any>).map((each) => each.name)

const CATALOG = ["look_up_order", "book_slot", "always_fails", "echo_secret", "slow", "huge"]

describe("MCP servers in the tool library", () => {
  it("fetches the server's catalog when the tool is created, lists and keeps it on /test, and refreshes it", async () => {
    const account = await newAccount(api, "mcp")
    const tool = await createTool(account, mcpTool(`${mcp.url}/mcp`))
    expect(tool.category).toBe("mcp")
    expect(tool.definition.config.transport).toBe("streamable_http")
    expect(toolNames(tool)).toEqual(CATALOG)
    const lookUp = tool.definition.config.discovered_tools[0]
    expect(lookUp).toEqual({
      name: "look_up_order",
      description: "Finds an order's status by its number",
      inputSchema: expect.objectContaining({
        type: "object",
        properties: { order_id: { type: "string", description: "The order number" } },
        required: ["order_id"]
      }),
      read_only: true
    })

    const listed = await api.post(`${TOOLS}/${tool.tool_uuid}/test`, {}, { token: account.token })
    expect(listed.status).toBe(200)
    expect(listed.body.status).toBe("success")
    expect(listed.body.data.tools.map((each: any) => each.name)).toEqual(CATALOG)
    expect(listed.body.result).toContain("mcp__orders__look_up_order")

    const called = await api.post(`${TOOLS}/${tool.tool_uuid}/test`, {
      llm_params: { tool_name: "look_up_order", arguments: { order_id: "A-42" } }
    }, { token: account.token })
    expect(called.body).toMatchObject({
      status: "success",
      result: "Order A-42 has shipped and arrives tomorrow.",
      error: null
    })

    const refreshed = await api.post(`${TOOLS}/${tool.tool_uuid}/mcp/refresh`, {}, { token: account.token })
    expect(refreshed.status).toBe(200)
    expect(refreshed.body.error).toBeNull()
    expect(refreshed.body.discovered_tools.map((each: any) => each.name)).toEqual(CATALOG)

    const v2 = await api.post(`/api/v2/tools/${tool.tool_uuid}/mcp/refresh`, {}, {
      apiKey: await newApiKey(api, account)
    })
    expect(v2.status).toBe(200)
    expect(v2.body.data.tool_uuid).toBe(tool.tool_uuid)
  })

  it("speaks the protocol's sessions: one per exchange, its id on every request after initialize, ended with DELETE", async () => {
    const account = await newAccount(api, "mcp")
    const before = mcp.requests.length
    const tool = await createTool(account, mcpTool(`${mcp.url}/mcp`))
    await api.post(`${TOOLS}/${tool.tool_uuid}/test`, {
      llm_params: { tool_name: "book_slot", arguments: { day: "Monday" } }
    }, { token: account.token })
    await expect.poll(() => mcp.openSessions()).toBe(0)
    const made = mcp.requests.slice(before)
    const initializes = made.filter((request) => request.rpcMethod === "initialize")
    expect(initializes).toHaveLength(2)
    for (const request of initializes) expect(request.sessionId).toBeUndefined()
    const rest = made.filter((request) => request.rpcMethod !== "initialize")
    expect(rest.map((request) => request.rpcMethod ?? request.method)).toEqual(
      expect.arrayContaining(["notifications/initialized", "tools/list", "tools/call", "DELETE"])
    )
    for (const request of rest) expect(request.sessionId).toMatch(/^[0-9a-f-]{36}$/)
  })

  it("uses the legacy HTTP+SSE transport when asked", async () => {
    const account = await newAccount(api, "mcp")
    const tool = await createTool(account, mcpTool(`${mcp.url}/sse`, { transport: "sse" }))
    expect(toolNames(tool)).toEqual(CATALOG)
    const called = await api.post(`${TOOLS}/${tool.tool_uuid}/test`, {
      llm_params: { tool_name: "look_up_order", arguments: { order_id: "B-7" } }
    }, { token: account.token })
    expect(called.body.result).toBe("Order B-7 has shipped and arrives tomorrow.")
  })

  it("saves a tool whose server is down, says so on refresh keeping the catalog, and a call reports it", async () => {
    const account = await newAccount(api, "mcp")
    const doomed = await startLoopbackMcp()
    const tool = await createTool(account, mcpTool(`${doomed.url}/mcp`))
    expect(toolNames(tool)).toEqual(CATALOG)
    await doomed.close()

    const refreshed = await api.post(`${TOOLS}/${tool.tool_uuid}/mcp/refresh`, {}, { token: account.token })
    expect(refreshed.status).toBe(200)
    expect(refreshed.body.error).toMatch(
      /^the MCP server could not be reached \(ECONNREFUSED\); the tools listed before are kept$/
    )
    expect(refreshed.body.discovered_tools.map((each: any) => each.name)).toEqual(CATALOG)
    const kept = await api.get(`${TOOLS}/${tool.tool_uuid}`, { token: account.token })
    expect(toolNames(kept.body)).toEqual(CATALOG)

    const called = await api.post(`${TOOLS}/${tool.tool_uuid}/test`, {
      llm_params: { tool_name: "look_up_order", arguments: { order_id: "A-1" } }
    }, { token: account.token })
    expect(called.body.status).toBe("error")
    expect(called.body.result).toBe("Error: the MCP server could not be reached (ECONNREFUSED)")

    const created = await createTool(account, mcpTool(`${doomed.url}/mcp`, {}, "Down"))
    expect(created.definition.config.discovered_tools).toBeUndefined()
  })

  it("refuses a URL with a placeholder, one that is not http(s), and a non-MCP tool's refresh", async () => {
    const account = await newAccount(api, "mcp")
    const placeholder = await api.post(TOOLS, mcpTool(`${mcp.url}/{{tenant}}/mcp`), { token: account.token })
    expect(placeholder.status).toBe(422)
    expect(placeholder.body.detail[0].loc).toEqual(["body", "definition", "config", "url"])
    const ftp = await api.post(TOOLS, mcpTool("ftp://127.0.0.1/mcp"), { token: account.token })
    expect(ftp.status).toBe(422)
    const calculator = await createTool(account, { name: "Calc", definition: { type: "calculator" } })
    const refresh = await api.post(`${TOOLS}/${calculator.tool_uuid}/mcp/refresh`, {}, { token: account.token })
    expect(refresh.status).toBe(422)
  })
})

describe("MCP credentials", () => {
  it("sends the credential to the server it is bound to, on every request, and never shows it", async () => {
    const account = await newAccount(api, "mcpauth")
    const credential = await bearer(account, guarded.host)
    const before = guarded.requests.length
    const tool = await createTool(account, mcpTool(`${guarded.url}/mcp`, { credential_uuid: credential }))
    expect(toolNames(tool)).toEqual(CATALOG)
    const echoed = await api.post(`${TOOLS}/${tool.tool_uuid}/test`, { llm_params: { tool_name: "echo_secret" } }, {
      token: account.token
    })
    expect(echoed.body.result).toBe("You sent ****")
    expect(JSON.stringify(echoed.body)).not.toContain(TOKEN)
    const made = guarded.requests.slice(before)
    expect(made.length).toBeGreaterThan(4)
    for (const request of made) expect(request.authorization).toBe(`Bearer ${TOKEN}`)
    const shown = await api.get(`${TOOLS}/${tool.tool_uuid}`, { token: account.token })
    expect(JSON.stringify(shown.body)).not.toContain(TOKEN)
  })

  it("without the credential, the server's 401 is the answer; a credential bound elsewhere is refused and never sent", async () => {
    const account = await newAccount(api, "mcpauth")
    const bare = await createTool(account, mcpTool(`${guarded.url}/mcp`))
    expect(bare.definition.config.discovered_tools).toBeUndefined()
    const refused = await api.post(`${TOOLS}/${bare.tool_uuid}/test`, {}, { token: account.token })
    expect(refused.body.result).toBe("Error: the MCP server answered HTTP 401 (the credential is missing or refused)")

    const credential = await bearer(account, guarded.host)
    const before = mcp.requests.length
    const elsewhere = await api.post(TOOLS, mcpTool(`${mcp.url}/mcp`, { credential_uuid: credential }), {
      token: account.token
    })
    expect(elsewhere.status).toBe(422)
    expect(elsewhere.body.detail[0].loc).toEqual(["body", "definition", "config", "credential_uuid"])
    expect(elsewhere.body.detail[0].msg).toContain(`bound to ${guarded.host}`)

    // Moving a tool with a credential to another server is refused the same way, and nothing reaches it.
    const tool = await createTool(account, mcpTool(`${guarded.url}/mcp`, { credential_uuid: credential }, "Guarded"))
    const moved = await api.put(`${TOOLS}/${tool.tool_uuid}`, {
      definition: { type: "mcp", config: { url: `${mcp.url}/mcp`, credential_uuid: credential } }
    }, { token: account.token })
    expect(moved.status).toBe(422)
    expect(mcp.requests.slice(before)).toEqual([])
  })

  it("keeps each organization's MCP tools and credentials to itself", async () => {
    const owner = await newAccount(api, "mcpown")
    const credential = await bearer(owner, guarded.host)
    const tool = await createTool(owner, mcpTool(`${guarded.url}/mcp`, { credential_uuid: credential }))
    const stranger = await newAccount(api, "mcpstranger")
    expect((await api.get(`${TOOLS}/${tool.tool_uuid}`, { token: stranger.token })).status).toBe(404)
    expect((await api.post(`${TOOLS}/${tool.tool_uuid}/test`, {}, { token: stranger.token })).status).toBe(404)
    expect((await api.post(`${TOOLS}/${tool.tool_uuid}/mcp/refresh`, {}, { token: stranger.token })).status).toBe(
      404
    )
    const borrowed = await api.post(TOOLS, mcpTool(`${guarded.url}/mcp`, { credential_uuid: credential }), {
      token: stranger.token
    })
    expect(borrowed.status).toBe(422)
    expect(borrowed.body.detail[0].loc).toEqual(["body", "definition", "config", "credential_uuid"])
  })
})

describe("MCP tools under the outbound policy", () => {
  it("refuses a loopback MCP server when tools may not reach loopback addresses", async () => {
    const strict = await startServer({ TALKGRAPH_OUTBOUND_ALLOW: "models:loopback" })
    try {
      const strictApi = client(strict.url)
      const account = await newAccount(strictApi, "mcpstrict")
      const refused = await strictApi.post(TOOLS, mcpTool(`${mcp.url}/mcp`), { token: account.token })
      expect(refused.status).toBe(422)
      expect(refused.body.detail[0].loc).toEqual(["body", "definition", "config", "url"])
      expect(refused.body.detail[0].msg).toMatch(/^url refused: .*loopback/)
    } finally {
      await strict.close()
    }
  })
})

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

const agentWith = async (account: TestAccount, toolUuids: ReadonlyArray<string>) => {
  const created = await api.post("/api/v1/workflow/create/definition", {
    name: "MCP agent",
    workflow_definition: {
      nodes: [
        node("start", "startCall", { name: "Start", greeting: "Hello!", prompt: "Help.", tool_uuids: toolUuids }),
        node("end", "endCall", { name: "End", prompt: "Bye." })
      ],
      edges: [{ id: "e1", source: "start", target: "end", data: { label: "Done", condition: "done" } }]
    }
  }, { token: account.token })
  return created
}

const chat = async (account: TestAccount, workflowId: number) => {
  const session = await api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions`, {}, { token: account.token })
  expect(session.status).toBe(200)
  const runId = session.body.workflow_run_id as number
  return (text: string) =>
    api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions/${runId}/messages`, { text }, { token: account.token })
}

describe("MCP tools in a conversation", () => {
  it("offers the server's tools under namespaced names with their schemas, and the model answers with a call's result", async () => {
    const account = await newAccount(api, "mcpchat")
    await useLlm(api, account, llm.baseUrl)
    const tool = await createTool(account, mcpTool(`${mcp.url}/mcp`, { tools_filter: ["look_up_order", "book_slot"] }))
    const created = await agentWith(account, [tool.tool_uuid])
    expect(created.status).toBe(200)
    const say = await chat(account, created.body.id)
    llm.enqueue(
      reply.toolCalls([{ name: "mcp__orders__look_up_order", arguments: { order_id: "A-42" }, id: "call_1" }]),
      reply.content("Your order A-42 has shipped; it arrives tomorrow.")
    )
    const answered = await say("Where is order A-42?")
    expect(answered.status).toBe(200)
    expect(answered.body.reply).toBe("Your order A-42 has shipped; it arrives tomorrow.")

    const offered = llm.requests[0]!.body.tools.map((each: any) => each.function)
    expect(offered.map((each: any) => each.name)).toEqual([
      "done",
      "end_call",
      "mcp__orders__look_up_order",
      "mcp__orders__book_slot"
    ])
    expect(offered[2].description).toBe("Finds an order's status by its number")
    expect(offered[2].parameters).toMatchObject({
      type: "object",
      properties: { order_id: { type: "string", description: "The order number" } },
      required: ["order_id"]
    })
    const results = llm.requests[1]!.body.messages.filter((message: any) => message.role === "tool")
    expect(results).toEqual([
      { role: "tool", tool_call_id: "call_1", content: "Order A-42 has shipped and arrives tomorrow." }
    ])
    const calls = (answered.body.transcript as Array<any>).find((turn) => turn.tool_calls).tool_calls
    expect(calls).toEqual([{
      id: "call_1",
      name: "mcp__orders__look_up_order",
      tool_uuid: tool.tool_uuid,
      arguments: JSON.stringify({ order_id: "A-42" }),
      status: "success",
      latency_ms: expect.any(Number),
      result: "Order A-42 has shipped and arrives tomorrow.",
      truncated: false
    }])
  })

  it("gives a tool's error, a timeout, a huge answer and a dead server back to the model, which still answers", async () => {
    const account = await newAccount(api, "mcpchat")
    await useLlm(api, account, llm.baseUrl)
    const tool = await createTool(account, mcpTool(`${mcp.url}/mcp`, { timeout_ms: 1500 }))
    const doomed = await startLoopbackMcp()
    const gone = await createTool(account, mcpTool(`${doomed.url}/mcp`, { tools_filter: ["look_up_order"] }, "Gone"))
    await doomed.close()
    const created = await agentWith(account, [tool.tool_uuid, gone.tool_uuid])
    expect(created.status).toBe(200)
    const say = await chat(account, created.body.id)
    llm.enqueue(
      reply.toolCalls([
        { name: "mcp__orders__always_fails", arguments: {} },
        { name: "mcp__orders__slow", arguments: { ms: 5000 } },
        { name: "mcp__orders__huge", arguments: {} },
        { name: "mcp__gone__look_up_order", arguments: { order_id: "A-1" } }
      ]),
      reply.content("Sorry, I cannot reach our systems right now.")
    )
    const answered = await say("Book me in")
    expect(answered.body.reply).toBe("Sorry, I cannot reach our systems right now.")
    const results = llm.requests[1]!.body.messages.filter((message: any) => message.role === "tool")
    expect(results.map((message: any) => message.content)).toEqual([
      "Error: the tool answered: The booking system is down.",
      "Error: the MCP server did not answer within 1500 ms",
      "Error: the MCP server's answer was larger than 5 MB",
      "Error: the MCP server could not be reached (ECONNREFUSED)"
    ])
    const calls = (answered.body.transcript as Array<any>).find((turn) => turn.tool_calls).tool_calls
    expect(calls.map((call: any) => call.status)).toEqual(["error", "error", "error", "error"])
  })

  it("validates MCP function names against the node's edges like every tool name", async () => {
    const account = await newAccount(api, "mcpvalid")
    const tool = await createTool(account, mcpTool(`${mcp.url}/mcp`, { tools_filter: ["look_up_order"] }))
    const twin = await createTool(account, mcpTool(`${mcp.url}/mcp`, { tools_filter: ["look_up_order"] }))
    const refused = await agentWith(account, [tool.tool_uuid, twin.tool_uuid])
    expect(refused.status).toBe(422)
    expect((refused.body.detail as Array<any>).map((problem) => [problem.loc.join("."), problem.type])).toEqual([
      ["body.workflow_definition.nodes.0.data.tool_uuids.1", "tool_name_conflict"]
    ])
    expect(refused.body.detail[0].msg).toContain("mcp__orders__look_up_order")
    const stranger = await newAccount(api, "mcpvalid")
    const foreign = await agentWith(stranger, [tool.tool_uuid])
    expect(foreign.status).toBe(422)
    expect(foreign.body.detail[0].type).toBe("tool_unknown")
  })
})
