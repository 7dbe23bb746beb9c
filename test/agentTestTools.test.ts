import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { type LoopbackApi, startLoopbackApi } from "./support/loopbackApi.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let target: LoopbackApi

/** The caller asks about order A-42 once and hangs up; the agent looks it up, then answers from the result. */
const orderRolePlay = (body: any) => {
  const messages: Array<any> = body.messages ?? []
  if (body.response_format?.json_schema?.name === "simulated_caller_turn") {
    const said = messages.filter((message) => message.role === "assistant").length
    return reply.json({ message: said === 0 ? "Where is my order A-42?" : "Thanks", hang_up: said >= 1 })
  }
  const last = messages[messages.length - 1]
  if (last?.role === "tool") return reply.content(`Your order: ${last.content}`)
  if (/A-42/.test(last?.content ?? "")) {
    return reply.toolCalls([{ name: "look_up_order", arguments: { order_id: "A-42" } }], { content: "Let me check." })
  }
  return reply.content("Anything else?")
}

beforeAll(async () => {
  llm = await startScriptedLlm({ answer: orderRolePlay })
  target = await startLoopbackApi()
  server = await startServer()
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await llm?.close()
  await target?.close()
})

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

describe("agent tests with library tools", () => {
  it("checks the tools the agent really called and their arguments", async () => {
    const account = await newAccount(api, "tests-tools")
    await useLlm(api, account, llm.baseUrl)
    const tool = await api.post("/api/v1/tools", {
      name: "Look up order",
      description: "Finds an order's status by its number",
      definition: {
        type: "http_api",
        config: {
          method: "GET",
          url: `${target.url}/orders/{{order_id}}`,
          parameters: [{ name: "order_id", type: "string", description: "The order number" }],
          response_pointer: "/order"
        }
      }
    }, { token: account.token })
    expect(tool.status).toBe(200)
    const created = await api.post("/api/v1/workflow/create/definition", {
      name: "Order agent",
      workflow_definition: {
        nodes: [
          node("start", "startCall", {
            name: "Start",
            greeting: "Hello, how can I help?",
            prompt: "Help with orders.",
            tool_uuids: [tool.body.tool_uuid]
          }),
          node("end", "endCall", { name: "End", prompt: "Say goodbye." })
        ],
        edges: [{ id: "e1", source: "start", target: "end", data: { label: "Done", condition: "The caller is done" } }]
      }
    }, { token: account.token })
    expect(created.status).toBe(200)
    const agentId = created.body.id
    const key = await newApiKey(api, account, ["tests:read", "tests:write"])
    const before = target.requests.length
    const ids: Array<number> = []
    for (
      const [name, args] of [["Looks up the caller's order", { order_id: "A-42" }], ["Looks up another order", {
        order_id: "B-7"
      }]] as const
    ) {
      const added = await api.post(`/api/v2/agents/${agentId}/tests`, {
        name,
        persona: "Wants to know where order A-42 is",
        expectations: { tools_called: [{ name: "look_up_order", arguments: args }] }
      }, { apiKey: key })
      ids.push(added.body.data.id)
    }
    const started = await api.post(`/api/v2/agents/${agentId}/test-runs`, {}, { apiKey: key })
    expect(started.status).toBe(202)
    let run: any
    for (let attempt = 0; attempt < 300; attempt++) {
      run = (await api.get(`/api/v2/agents/${agentId}/test-runs/${started.body.data.id}`, { apiKey: key })).body.data
      if (run.status === "completed" || run.status === "failed") break
      await new Promise((resolve) => setTimeout(resolve, 100))
    }
    expect(run.status).toBe("completed")
    const [right, wrong] = run.cases
    expect(right).toMatchObject({ test_id: ids[0], passed: 1, pass_rate: 1 })
    expect(right.conversations[0].transcript.map((turn: any) => turn.text)).toEqual([
      "Hello, how can I help?",
      "Where is my order A-42?",
      "Let me check.",
      "Your order: {\"id\":\"A-42\",\"status\":\"shipped\",\"eta\":\"tomorrow\"}",
      "Thanks",
      "Anything else?"
    ])
    expect(wrong.conversations[0].failed_expectations).toEqual([
      {
        expectation: "tools_called",
        reason: "\"look_up_order\" was called with {\"order_id\":\"A-42\"}, not with {\"order_id\":\"B-7\"}"
      }
    ])
    // The tool really ran, once per conversation.
    expect(target.requests.slice(before).map((request) => request.path)).toEqual(["/orders/A-42", "/orders/A-42"])
  })
})
