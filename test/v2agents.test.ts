import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { runnableDefinition } from "./support/workflowGraphs.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

const createAgents = async (account: TestAccount, count: number) => {
  const ids: Array<number> = []
  for (let index = 1; index <= count; index++) {
    const reply = await api.post("/api/v1/workflow/create/definition", {
      name: `Agent ${index}`,
      workflow_definition: runnableDefinition(),
      workflow_configurations: { max_call_duration: 100 + index }
    }, { token: account.token })
    ids.push(reply.body.id)
  }
  return ids
}

describe("GET /api/v2/agents", () => {
  it("pages the organization's agents newest first in the collection envelope", async () => {
    const account = await newAccount(api)
    const ids = await createAgents(account, 3)
    const key = await newApiKey(api, account, ["agents:read"])

    const first = await api.get("/api/v2/agents?page=1&page_size=2", { apiKey: key })
    expect(first.status).toBe(200)
    expect(first.body.pagination).toEqual({ page: 1, page_size: 2, total_items: 3, total_pages: 2 })
    expect(first.body.data.map((agent: any) => agent.id)).toEqual([ids[2], ids[1]])
    expect(first.body.data[0]).toEqual({
      id: ids[2],
      uuid: expect.stringMatching(/^[0-9a-f-]{36}$/),
      name: "Agent 3",
      status: "active",
      version_number: 1,
      version_status: "published",
      created_at: expect.any(String),
      updated_at: expect.any(String)
    })
    const second = await api.get("/api/v2/agents?page=2&page_size=2", { apiKey: key })
    expect(second.body.data.map((agent: any) => agent.id)).toEqual([ids[0]])
    const beyond = await api.get("/api/v2/agents?page=5&page_size=2", { apiKey: key })
    expect(beyond.body).toEqual({ data: [], pagination: { page: 5, page_size: 2, total_items: 3, total_pages: 2 } })
    const defaults = await api.get("/api/v2/agents", { apiKey: key })
    expect(defaults.body.pagination).toEqual({ page: 1, page_size: 20, total_items: 3, total_pages: 1 })
  })

  it.each([
    ["page=0", "page"],
    ["page_size=0", "page_size"],
    ["page_size=101", "page_size"],
    ["page=abc", "page"]
  ])("refuses %s with 422 validation_error", async (query, field) => {
    const account = await newAccount(api)
    const key = await newApiKey(api, account)
    const reply = await api.get(`/api/v2/agents?${query}`, { apiKey: key })
    expect(reply.status).toBe(422)
    expect(reply.body.error.code).toBe("validation_error")
    expect(reply.body.error.details[0].loc).toEqual(["query", field])
  })
})

describe("GET /api/v2/agents/{agent_id}", () => {
  it("reads one agent with its definition and configurations", async () => {
    const account = await newAccount(api)
    const [id] = await createAgents(account, 1)
    const key = await newApiKey(api, account, ["agents:read"])
    const reply = await api.get(`/api/v2/agents/${id}`, { apiKey: key })
    expect(reply.status).toBe(200)
    expect(reply.body.data).toMatchObject({
      id,
      name: "Agent 1",
      version_status: "published",
      definition: runnableDefinition(),
      configurations: { max_call_duration: 101 }
    })
  })

  it("answers 404 in the v2 envelope for another organization's agent and for an unknown id", async () => {
    const owner = await newAccount(api, "owner")
    const other = await newAccount(api, "other")
    const [id] = await createAgents(owner, 1)
    const key = await newApiKey(api, other)
    const foreign = await api.get(`/api/v2/agents/${id}`, { apiKey: key })
    expect(foreign.status).toBe(404)
    expect(foreign.body).toEqual({ error: { code: "not_found", message: `Agent ${id} not found` } })
    expect((await api.get("/api/v2/agents/999999999", { apiKey: key })).body).toEqual({
      error: { code: "not_found", message: "Agent 999999999 not found" }
    })
    expect((await api.get("/api/v2/agents", { apiKey: key })).body.pagination.total_items).toBe(0)
    const malformed = await api.get("/api/v2/agents/abc", { apiKey: key })
    expect(malformed.status).toBe(422)
    expect(malformed.body.error.code).toBe("validation_error")
  })
})

describe("v2 agents access", () => {
  it("answers 401 without an API key, and for a session token", async () => {
    const account = await newAccount(api)
    const none = await api.get("/api/v2/agents")
    expect(none.status).toBe(401)
    expect(none.body.error.code).toBe("unauthorized")
    expect((await api.get("/api/v2/agents", { token: account.token })).status).toBe(401)
    expect((await api.get("/api/v2/agents/1", { apiKey: "tgk_not_a_real_key" })).status).toBe(401)
  })

  it("answers 403 for a key without agents:read", async () => {
    const account = await newAccount(api)
    const [id] = await createAgents(account, 1)
    const key = await newApiKey(api, account, ["campaigns:read"])
    const list = await api.get("/api/v2/agents", { apiKey: key })
    expect(list.status).toBe(403)
    expect(list.body.error.code).toBe("forbidden")
    expect((await api.get(`/api/v2/agents/${id}`, { apiKey: key })).status).toBe(403)
  })

  it("describes V2_Agent in the OpenAPI document", async () => {
    const spec = (await api.get("/openapi.json")).body
    const agent = spec.components.schemas.V2_Agent
    expect(Object.keys(agent.properties)).toEqual([
      "id",
      "uuid",
      "name",
      "status",
      "version_number",
      "version_status",
      "created_at",
      "updated_at",
      "definition",
      "configurations"
    ])
    expect(spec.paths["/api/v2/agents"].get).toBeDefined()
    expect(spec.paths["/api/v2/agents/{agent_id}"].get.responses["404"]).toBeDefined()
    expect(spec.paths["/api/v1/workflow/create/template"].post).toBeDefined()
    expect(spec.components.schemas.WorkflowResponse.required).toEqual([
      "id",
      "name",
      "status",
      "created_at",
      "workflow_definition",
      "current_definition_id"
    ])
  })
})
