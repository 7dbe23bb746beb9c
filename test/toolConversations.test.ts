import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { type LoopbackApi, startLoopbackApi } from "./support/loopbackApi.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let target: LoopbackApi

beforeAll(async () => {
  llm = await startScriptedLlm()
  target = await startLoopbackApi()
  server = await startServer()
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await llm?.close()
  await target?.close()
})

beforeEach(() => llm.reset())

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

const definitionWith = (startTools: ReadonlyArray<string>, globalTools: ReadonlyArray<string> = []) => ({
  nodes: [
    node("start", "startCall", {
      name: "Start",
      greeting: "Hello {{first_name}}, how can I help?",
      prompt: "Help with orders.",
      tool_uuids: startTools
    }),
    node("end", "endCall", { name: "End", prompt: "Say goodbye." }),
    node("global", "globalNode", { name: "Global", prompt: "Be brief.", tool_uuids: globalTools })
  ],
  edges: [{ id: "e1", source: "start", target: "end", data: { label: "Done", condition: "The caller is done" } }]
})

const createTool = async (account: TestAccount, body: Record<string, unknown>) => {
  const created = await api.post("/api/v1/tools", body, { token: account.token })
  if (created.status !== 200) throw new Error(`tool creation failed: ${created.status} ${JSON.stringify(created.body)}`)
  return created.body.tool_uuid as string
}

const orderTool = (account: TestAccount) =>
  createTool(account, {
    name: "Look up order",
    description: "Finds an order's status by its number",
    definition: {
      type: "http_api",
      config: {
        method: "GET",
        url: `${target.url}/orders/{{order_id}}`,
        parameters: [{ name: "order_id", type: "string", description: "The order number" }],
        preset_parameters: [{ name: "caller", type: "string", value_template: "{{first_name}}" }],
        response_pointer: "/order"
      }
    }
  })

const slowTool = (account: TestAccount, name: string) =>
  createTool(account, {
    name,
    definition: {
      type: "http_api",
      config: {
        method: "GET",
        url: `${target.url}/slow`,
        parameters: [{ name: "ms", type: "number", description: "delay" }],
        timeout_ms: 2000
      }
    }
  })

const agent = async (account: TestAccount, definition: unknown) => {
  const created = await api.post("/api/v1/workflow/create/definition", {
    name: "Tool agent",
    workflow_definition: definition
  }, { token: account.token })
  return created
}

const chat = async (account: TestAccount, workflowId: number) => {
  const session = await api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions`, {
    initial_context: { first_name: "Ada" }
  }, { token: account.token })
  expect(session.status).toBe(200)
  const runId = session.body.workflow_run_id as number
  return (text: string) =>
    api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions/${runId}/messages`, { text }, { token: account.token })
}

describe("tools in a conversation", () => {
  it("offers the node's and the global node's tools with their schemas, runs the calls of one reply concurrently, and the model answers with the results", async () => {
    const account = await newAccount(api, "convo")
    await useLlm(api, account, llm.baseUrl)
    const order = await orderTool(account)
    const calculator = await createTool(account, { name: "Calculate", definition: { type: "calculator" } })
    const created = await agent(account, definitionWith([order], [calculator]))
    expect(created.status).toBe(200)
    const say = await chat(account, created.body.id)

    llm.enqueue(
      reply.toolCalls([
        { name: "look_up_order", arguments: { order_id: "A-42" }, id: "call_order" },
        { name: "calculate", arguments: { expression: "2 * 21" }, id: "call_sum" }
      ], { content: "Let me check." }),
      reply.content("Order A-42 has shipped and arrives tomorrow.")
    )
    const before = target.requests.length
    const answered = await say("Where is my order A-42?")
    expect(answered.status).toBe(200)
    expect(answered.body.reply).toBe("Let me check.\nOrder A-42 has shipped and arrives tomorrow.")

    const offered = llm.requests[0]!.body.tools.map((tool: any) => tool.function)
    expect(offered.map((tool: any) => tool.name)).toEqual(["done", "end_call", "look_up_order", "calculate"])
    expect(offered[2].parameters).toEqual({
      type: "object",
      properties: { order_id: { type: "string", description: "The order number" } },
      required: ["order_id"],
      additionalProperties: false
    })
    const made = target.requests.slice(before)
    expect(made.map((request) => [request.path, request.query])).toEqual([["/orders/A-42", { caller: "Ada" }]])

    const followUp = llm.requests[1]!.body.messages.slice(-3)
    expect(followUp[0]).toMatchObject({
      role: "assistant",
      content: "Let me check.",
      tool_calls: [
        { id: "call_order", type: "function", function: { name: "look_up_order" } },
        { id: "call_sum", type: "function", function: { name: "calculate" } }
      ]
    })
    expect(followUp[1]).toEqual({
      role: "tool",
      tool_call_id: "call_order",
      content: JSON.stringify({ id: "A-42", status: "shipped", eta: "tomorrow" })
    })
    expect(followUp[2]).toEqual({
      role: "tool",
      tool_call_id: "call_sum",
      content: "{\"expression\":\"2 * 21\",\"result\":42}"
    })

    const transcript = answered.body.transcript as Array<any>
    const toolTurn = transcript.find((turn) => turn.tool_calls)
    expect(toolTurn.tool_calls).toEqual([
      {
        id: "call_order",
        name: "look_up_order",
        tool_uuid: order,
        arguments: JSON.stringify({ order_id: "A-42" }),
        status: "success",
        latency_ms: expect.any(Number),
        result: JSON.stringify({ id: "A-42", status: "shipped", eta: "tomorrow" }),
        truncated: false
      },
      expect.objectContaining({ name: "calculate", status: "success", tool_uuid: calculator })
    ])

    // The stored transcript gives the calls back to the model on the next message too.
    llm.enqueue(reply.content("You're welcome."))
    await say("Thanks")
    const replayed = llm.requests[2]!.body.messages.map((message: any) => message.role)
    expect(replayed).toEqual(["system", "assistant", "user", "assistant", "tool", "tool", "assistant", "user"])
  })

  it("runs two slow calls at the same time", async () => {
    const account = await newAccount(api, "convo")
    await useLlm(api, account, llm.baseUrl)
    const first = await slowTool(account, "Slow one")
    const second = await slowTool(account, "Slow two")
    const created = await agent(account, definitionWith([first, second]))
    const say = await chat(account, created.body.id)
    llm.enqueue(
      reply.toolCalls([
        { name: "slow_one", arguments: { ms: 600 } },
        { name: "slow_two", arguments: { ms: 600 } }
      ]),
      reply.content("Both done.")
    )
    const started = Date.now()
    const answered = await say("Do both")
    const elapsed = Date.now() - started
    expect(answered.body.reply).toBe("Both done.")
    const calls = (answered.body.transcript as Array<any>).find((turn) => turn.tool_calls).tool_calls
    expect(calls.map((call: any) => call.status)).toEqual(["success", "success"])
    for (const call of calls) expect(call.latency_ms).toBeGreaterThanOrEqual(590)
    expect(elapsed).toBeLessThan(1150)
  })

  it("gives a failure or timeout back to the model as an error, and the model still answers", async () => {
    const account = await newAccount(api, "convo")
    await useLlm(api, account, llm.baseUrl)
    const failing = await createTool(account, {
      name: "Broken",
      definition: { type: "http_api", config: { method: "GET", url: `${target.url}/fail` } }
    })
    const slow = await createTool(account, {
      name: "Too slow",
      definition: {
        type: "http_api",
        config: {
          method: "GET",
          url: `${target.url}/slow`,
          parameters: [{ name: "ms", type: "number", description: "delay" }],
          timeout_ms: 200
        }
      }
    })
    const created = await agent(account, definitionWith([failing, slow]))
    const say = await chat(account, created.body.id)
    llm.enqueue(
      reply.toolCalls([{ name: "broken", arguments: {} }, { name: "too_slow", arguments: { ms: 3000 } }]),
      reply.content("Sorry, our systems are down right now.")
    )
    const answered = await say("Check please")
    expect(answered.body.reply).toBe("Sorry, our systems are down right now.")
    const results = llm.requests[1]!.body.messages.filter((message: any) => message.role === "tool")
    expect(results.map((message: any) => message.content)).toEqual([
      "Error: the API answered HTTP 500: {\"error\":\"database down\"}",
      "Error: the API did not answer within 200 ms"
    ])
    const calls = (answered.body.transcript as Array<any>).find((turn) => turn.tool_calls).tool_calls
    expect(calls.map((call: any) => call.status)).toEqual(["error", "error"])
  })
})

describe("tools in graph validation", () => {
  it("reports a node naming a missing, archived or another organization's tool, and one whose name an edge takes", async () => {
    const account = await newAccount(api, "valid")
    const order = await orderTool(account)
    const archived = await createTool(account, { name: "Old", definition: { type: "calculator" } })
    await api.delete(`/api/v1/tools/${archived}`, { token: account.token })
    const clash = await createTool(account, { name: "Done", definition: { type: "calculator" } })
    const stranger = await newAccount(api, "stranger")
    const theirs = await orderTool(stranger)

    const refused = await agent(account, definitionWith([order, "no-such-tool", archived, theirs, clash]))
    expect(refused.status).toBe(422)
    const problems = (refused.body.detail as Array<any>).map((problem) => [problem.loc.join("."), problem.type])
    expect(problems).toEqual([
      ["body.workflow_definition.nodes.0.data.tool_uuids.1", "tool_unknown"],
      ["body.workflow_definition.nodes.0.data.tool_uuids.2", "tool_archived"],
      ["body.workflow_definition.nodes.0.data.tool_uuids.3", "tool_unknown"],
      ["body.workflow_definition.nodes.0.data.tool_uuids.4", "tool_name_conflict"]
    ])
    expect((await agent(account, definitionWith([order]))).status).toBe(200)
  })
})

describe("pre-call fetch", () => {
  const greetingAgent = (account: TestAccount, preCall: Record<string, unknown>) =>
    api.post("/api/v1/workflow/create/definition", {
      name: "Pre-call agent",
      workflow_definition: {
        nodes: [
          node("start", "startCall", { name: "Start", greeting: "Hello {{name | there}}!", prompt: "Help." }),
          node("end", "endCall", { name: "End", prompt: "Bye." })
        ],
        edges: [{ id: "e1", source: "start", target: "end", data: { label: "Done", condition: "Done" } }]
      },
      workflow_configurations: { pre_call_fetch: preCall }
    }, { token: account.token })

  const lookup = (account: TestAccount, config: Record<string, unknown>) =>
    createTool(account, { name: "CRM lookup", definition: { type: "http_api", config } })

  const open = (account: TestAccount, workflowId: number, initialContext: Record<string, unknown>) =>
    api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions`, { initial_context: initialContext }, {
      token: account.token
    })

  it("calls the tool before the greeting with the run's context, and its answer becomes variables", async () => {
    const account = await newAccount(api, "precall")
    await useLlm(api, account, llm.baseUrl)
    const tool = await lookup(account, {
      method: "GET",
      url: `${target.url}/orders/{{order_ref}}`,
      preset_parameters: [{ name: "order_ref", type: "string", value_template: "{{initial_context.order_ref}}" }],
      response_pointer: "/customer"
    })
    const created = await greetingAgent(account, { tool_uuid: tool })
    expect(created.status).toBe(200)
    const before = target.requests.length
    const session = await open(account, created.body.id, { order_ref: "R-9" })
    expect(session.status).toBe(200)
    expect(target.requests[before]!.path).toBe("/orders/R-9")
    expect(session.body.reply).toBe("Hello Ada Lovelace!")
  })

  it("proceeds without the variables when the fetch times out, or refuses when told to", async () => {
    const account = await newAccount(api, "precall")
    await useLlm(api, account, llm.baseUrl)
    const slow = await lookup(account, {
      method: "GET",
      url: `${target.url}/slow`,
      preset_parameters: [{ name: "ms", type: "number", value_template: "3000" }],
      timeout_ms: 200
    })
    const proceeding = await greetingAgent(account, { tool_uuid: slow })
    const started = Date.now()
    const session = await open(account, proceeding.body.id, {})
    expect(session.status).toBe(200)
    expect(session.body.reply).toBe("Hello there!")
    expect(Date.now() - started).toBeLessThan(2500)

    const misnamed = await greetingAgent(account, { tool_uuid: "0b6c9a52-4f1e-4c5b-9a43-6b1f8f0c2d99" })
    expect(misnamed.status).toBe(422)
    expect(misnamed.body.detail[0].loc).toEqual(["body", "workflow_configurations", "pre_call_fetch", "tool_uuid"])
    const misshapen = await greetingAgent(account, { tool_uuid: slow, on_failure: "ignore" })
    expect(misshapen.status).toBe(422)
    const refusing = await greetingAgent(account, { tool_uuid: slow, on_failure: "refuse" })
    const refused = await open(account, refusing.body.id, {})
    expect(refused.status).toBe(409)
    expect(refused.body.detail).toContain("the API did not answer within 200 ms")
  })
})

describe("per-agent model settings", () => {
  it("uses the agent's LLM model and temperature over the organization's, on every message, and refuses bad ones", async () => {
    const account = await newAccount(api, "overrides")
    await useLlm(api, account, llm.baseUrl)
    const create = (overrides: unknown) =>
      api.post("/api/v1/workflow/create/definition", {
        name: "Own model",
        workflow_definition: definitionWith([]),
        workflow_configurations: { overrides }
      }, { token: account.token })
    const refused = await create({ llm_temperature: 5, llm_model: "", voice: "x" })
    expect(refused.status).toBe(422)
    expect(refused.body.detail.map((problem: any) => problem.loc.slice(1).join("."))).toEqual(
      expect.arrayContaining([
        "workflow_configurations.overrides.llm_temperature",
        "workflow_configurations.overrides.voice"
      ])
    )
    const created = await create({ llm_model: "agent-model", llm_temperature: 0.3, tts_voice: "aria" })
    expect(created.status).toBe(200)
    const say = await chat(account, created.body.id)
    llm.enqueue(reply.content("First."), reply.content("Second."))
    await say("Hi")
    await say("Again")
    expect(llm.requests.map((request) => [request.body.model, request.body.temperature])).toEqual([
      ["agent-model", 0.3],
      ["agent-model", 0.3]
    ])
  })

  it("uses a node's own LLM model and temperature at that node, the agent's elsewhere, and refuses bad ones", async () => {
    const account = await newAccount(api, "nodemodel")
    await useLlm(api, account, llm.baseUrl)
    const graph = (startModel: Record<string, unknown>) => ({
      nodes: [
        node("start", "startCall", { name: "Start", greeting: "Hello!", prompt: "Qualify.", ...startModel }),
        node("agent", "agentNode", { name: "Details", prompt: "Take the details." }),
        node("end", "endCall", { name: "End", prompt: "Say goodbye." })
      ],
      edges: [
        { id: "e1", source: "start", target: "agent", data: { label: "Qualified", condition: "The caller qualifies" } },
        { id: "e2", source: "agent", target: "end", data: { label: "Done", condition: "All details taken" } }
      ]
    })
    const create = (startModel: Record<string, unknown>) =>
      api.post("/api/v1/workflow/create/definition", {
        name: "Node model",
        workflow_definition: graph(startModel),
        workflow_configurations: { overrides: { llm_model: "agent-model", llm_temperature: 0.3 } }
      }, { token: account.token })
    const refused = await create({ llm_model: "", llm_temperature: 3 })
    expect(refused.status).toBe(422)
    expect(refused.body.detail.map((problem: any) => problem.loc.slice(-1)[0])).toEqual(
      expect.arrayContaining(["llm_model", "llm_temperature"])
    )
    const created = await create({ llm_model: "fast-model", llm_temperature: 0 })
    expect(created.status).toBe(200)
    const say = await chat(account, created.body.id)
    llm.enqueue(
      reply.toolCalls([{ name: "qualified", arguments: {} }]),
      reply.content("Great, what is your address?")
    )
    await say("I want to buy")
    expect(llm.requests.map((request) => [request.body.model, request.body.temperature])).toEqual([
      ["fast-model", 0],
      ["agent-model", 0.3]
    ])
  })
})
