import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { validateDefinition } from "../src/graph/validation.ts"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { generatedAgentContent } from "./support/workflowGraphs.ts"

const TIMEOUT_SECONDS = 2
let server: RunningServer
let api: Client
let llm: ScriptedLlm

beforeAll(async () => {
  llm = await startScriptedLlm()
  server = await startServer({ TALKGRAPH_LLM_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS) })
  api = client(server.url)
})
afterEach(() => llm.reset())
afterAll(async () => {
  await server?.close()
  await llm?.close()
})

const LLM_KEY = "sk-scripted-0123456789"
const request = {
  call_type: "outbound",
  use_case: "Lead qualification",
  activity_description: "Call leads who asked for a demo and qualify them."
}

const accountWithLlm = async (baseUrl = llm.baseUrl) => {
  const account = await newAccount(api)
  const put = await api.put("/api/v1/organizations/model-configurations", {
    llm: { provider: "openai", model: "scripted-model", api_key: LLM_KEY, base_url: baseUrl }
  }, { token: account.token })
  expect(put.status).toBe(200)
  return account
}

const create = (account: TestAccount, body: unknown = request) =>
  api.post("/api/v1/workflow/create/template", body, { token: account.token })

const workflowsOf = async (account: TestAccount) =>
  (await api.get("/api/v1/workflow/fetch", { token: account.token })).body

describe("creating an agent from a template", () => {
  it("asks the organization's LLM for structured content and stores it in a validated, published starter graph", async () => {
    const account = await accountWithLlm()
    llm.enqueue(reply.json(generatedAgentContent()))
    const created = await create(account)
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({
      name: "Lead qualifier",
      status: "active",
      version_number: 1,
      version_status: "published",
      total_runs: 0,
      call_disposition_codes: { disposition_codes: ["QUALIFIED", "NOT_INTERESTED", "CALLBACK"] }
    })
    const definition = created.body.workflow_definition
    expect(validateDefinition(definition).problems).toEqual([])
    expect(definition.nodes.map((node: any) => node.type)).toEqual([
      "startCall",
      "agentNode",
      "agentNode",
      "endCall",
      "globalNode"
    ])
    expect(definition.nodes[0].data.greeting).toBe("Hi {{first_name | there}}, this is Sam from Acme.")
    expect(definition.edges).toHaveLength(5)

    expect(llm.requests).toHaveLength(1)
    const sent = llm.requests[0]!
    expect(sent.headers.authorization).toBe(`Bearer ${LLM_KEY}`)
    expect(sent.body.model).toBe("scripted-model")
    expect(sent.body.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "agent_template", strict: true }
    })
    expect(sent.body.response_format.json_schema.schema.required).toContain("transitions")
    const userMessage = sent.body.messages.find((message: any) => message.role === "user").content
    expect(userMessage).toContain("Lead qualification")
    expect(userMessage).toContain("outbound")
    expect(userMessage).toContain("Call leads who asked for a demo")

    expect((await workflowsOf(account)).map((workflow: any) => workflow.id)).toEqual([created.body.id])
  })

  it("retries once with the validation errors fed back when the first answer is unusable", async () => {
    const account = await accountWithLlm()
    const broken = generatedAgentContent()
    broken.transitions = broken.transitions.filter((transition) => transition.from !== "book")
    llm.enqueue(reply.json(broken), reply.json(generatedAgentContent()))
    const created = await create(account)
    expect(created.status).toBe(200)
    expect(llm.requests).toHaveLength(2)
    const retry = llm.requests[1]!.body.messages
    expect(retry.at(-2)).toEqual({ role: "assistant", content: JSON.stringify(broken) })
    expect(retry.at(-1).role).toBe("user")
    expect(retry.at(-1).content).toContain("Node \"book\" (agentNode): an agentNode needs at least one outgoing edge")
  })

  it("recovers from an answer that is not JSON at all", async () => {
    const account = await accountWithLlm()
    llm.enqueue(reply.content("Sure! Here is your agent: a friendly caller."), reply.json(generatedAgentContent()))
    expect((await create(account)).status).toBe(200)
    expect(llm.requests[1]!.body.messages.at(-1).content).toContain("not a JSON object")
  })

  it("answers 502 and stores nothing when the output is still unusable after the retry", async () => {
    const account = await accountWithLlm()
    llm.enqueue(reply.json({ name: "x" }), reply.json({ name: "still wrong" }))
    const created = await create(account)
    expect(created.status).toBe(502)
    expect(created.body.detail).toMatch(/did not produce a usable agent in 2 attempts/)
    expect(llm.requests).toHaveLength(2)
    expect(await workflowsOf(account)).toEqual([])
  })

  it("answers 502 within the configured timeout when the LLM does not answer, and stores nothing", async () => {
    const account = await accountWithLlm()
    llm.enqueue(reply.hang())
    const started = Date.now()
    const created = await create(account)
    const elapsed = Date.now() - started
    expect(created.status).toBe(502)
    expect(created.body.detail).toBe(`The organization's LLM did not answer within ${TIMEOUT_SECONDS} seconds`)
    expect(elapsed).toBeGreaterThanOrEqual(TIMEOUT_SECONDS * 1000 - 100)
    expect(elapsed).toBeLessThan(TIMEOUT_SECONDS * 1000 + 3000)
    expect(await workflowsOf(account)).toEqual([])
  })

  it("answers 502 without passing on the provider's error text", async () => {
    const account = await accountWithLlm()
    llm.enqueue(reply.error(401, "Incorrect API key provided: sk-scr***789; internal-detail-7f3a"))
    const created = await create(account)
    expect(created.status).toBe(502)
    expect(created.body.detail).toBe(
      "The organization's LLM could not be used; check the model, base_url and api_key in the model configuration (the server log has the details)"
    )
    expect(JSON.stringify(created.body)).not.toContain("internal-detail")
    expect(llm.requests).toHaveLength(1)
  })

  it("answers 502 when the LLM endpoint cannot be reached, in the same words as a refusal: nothing tells which ports answer", async () => {
    const closed = await create(await accountWithLlm("http://127.0.0.1:9/v1"))
    expect(closed.status).toBe(502)
    const account = await accountWithLlm()
    llm.enqueue(reply.error(404))
    const answering = await create(account)
    expect(answering.status).toBe(502)
    expect(closed.body.detail).toBe(answering.body.detail)
    expect(closed.body.detail).not.toMatch(/HTTP|404|ECONNREFUSED|refused|reached/)
  })

  it("answers 422 saying so when the organization has no LLM configured", async () => {
    const configured = await accountWithLlm()
    const account = await newAccount(api)
    const created = await create(account)
    expect(created.status).toBe(422)
    expect(created.body.detail).toEqual([{
      loc: ["body"],
      msg: expect.stringMatching(/No LLM is configured for this organization/),
      type: "llm_not_configured"
    }])
    expect(llm.requests).toHaveLength(0)
    expect(await workflowsOf(configured)).toEqual([])
  })

  it("validates call_type, use_case and activity_description in FastAPI's shape", async () => {
    const account = await accountWithLlm()
    const bad = await create(account, { call_type: "both", use_case: "  ", activity_description: "x".repeat(4001) })
    expect(bad.status).toBe(422)
    expect(bad.body.detail.map((problem: any) => problem.loc)).toEqual([
      ["body", "call_type"],
      ["body", "use_case"],
      ["body", "activity_description"]
    ])
    const missing = await create(account, {})
    expect(missing.body.detail.map((problem: any) => [problem.loc[1], problem.type])).toEqual([
      ["call_type", "missing"],
      ["use_case", "missing"],
      ["activity_description", "missing"]
    ])
    expect(llm.requests).toHaveLength(0)
  })

  it("requires agents:write", async () => {
    const account = await accountWithLlm()
    const reader = await newApiKey(api, account, ["agents:read"])
    const refused = await api.post("/api/v1/workflow/create/template", request, { apiKey: reader })
    expect(refused.status).toBe(403)
    expect((await api.post("/api/v1/workflow/create/template", request)).status).toBe(401)
    expect(llm.requests).toHaveLength(0)
  })
})
