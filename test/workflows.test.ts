import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
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

const create = async (account: TestAccount, name = "Sales agent", definition: unknown = runnableDefinition()) => {
  const reply = await api.post("/api/v1/workflow/create/definition", { name, workflow_definition: definition }, {
    token: account.token
  })
  if (reply.status !== 200) throw new Error(`create failed: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body
}

describe("creating a workflow from a definition", () => {
  it("stores a runnable definition as published version 1 and answers with every WorkflowResponse field", async () => {
    const account = await newAccount(api)
    const reply = await api.post("/api/v1/workflow/create/definition", {
      name: "Sales agent",
      workflow_definition: runnableDefinition(),
      template_context_variables: { first_name: "Ada" },
      workflow_configurations: { max_call_duration: 300 }
    }, { token: account.token })
    expect(reply.status).toBe(200)
    expect(Object.keys(reply.body).sort()).toEqual([
      "call_disposition_codes",
      "created_at",
      "current_definition_id",
      "id",
      "name",
      "status",
      "template_context_variables",
      "total_runs",
      "version_number",
      "version_status",
      "workflow_configurations",
      "workflow_definition",
      "workflow_uuid"
    ])
    expect(reply.body).toMatchObject({
      name: "Sales agent",
      status: "active",
      version_number: 1,
      version_status: "published",
      total_runs: 0,
      call_disposition_codes: { disposition_codes: [] },
      template_context_variables: { first_name: "Ada" },
      workflow_configurations: { max_call_duration: 300 },
      workflow_definition: runnableDefinition()
    })
    expect(reply.body.current_definition_id).toEqual(expect.any(Number))
    expect(reply.body.workflow_uuid).toMatch(/^[0-9a-f-]{36}$/)
    expect(new Date(reply.body.created_at).getTime()).toBeGreaterThan(Date.now() - 60_000)
  })

  it("refuses a definition that cannot run with a 422 listing every problem, and stores nothing", async () => {
    const account = await newAccount(api)
    const definition: any = runnableDefinition()
    definition.nodes[1].data.prompt = ""
    definition.edges[1].target = "nowhere"
    definition.nodes.push({ id: "start2", type: "startCall", data: { name: "Again", prompt: "p" } })
    const reply = await api.post("/api/v1/workflow/create/definition", {
      name: "Broken",
      workflow_definition: definition
    }, { token: account.token })
    expect(reply.status).toBe(422)
    const locs = reply.body.detail.map((problem: any) => problem.loc)
    expect(locs).toContainEqual(["body", "workflow_definition", "nodes", 1, "data", "prompt"])
    expect(locs).toContainEqual(["body", "workflow_definition", "edges", 1, "target"])
    expect(locs).toContainEqual(["body", "workflow_definition", "nodes", 4])
    expect(reply.body.detail.find((problem: any) => problem.type === "edge_endpoint_missing").msg).toMatch(
      /Edge "e2".*nowhere/
    )
    expect(reply.body.detail.length).toBeGreaterThanOrEqual(4)
    const list = await api.get("/api/v1/workflow/fetch", { token: account.token })
    expect(list.body).toEqual([])
  })

  it("validates the request body in FastAPI's shape", async () => {
    const account = await newAccount(api)
    const reply = await api.post("/api/v1/workflow/create/definition", { name: "", workflow_definition: "graph" }, {
      token: account.token
    })
    expect(reply.status).toBe(422)
    expect(reply.body.detail.map((problem: any) => problem.loc)).toEqual([["body", "name"], [
      "body",
      "workflow_definition"
    ]])
  })
})

describe("turn-taking settings", () => {
  it("keeps valid agent and node turn-taking settings, and refuses bad ones with a 422 naming each field", async () => {
    const account = await newAccount(api)
    const definition: any = runnableDefinition()
    definition.nodes[1].data.turn_taking = { endpointing_ms: 1200 }
    const turnTaking = {
      endpointing_ms: 400,
      min_interrupt_ms: 250,
      min_interrupt_words: 1,
      fallback_line: "Pardon?",
      fallback_model: "gpt-4o-mini"
    }
    const created = await api.post("/api/v1/workflow/create/definition", {
      name: "Patient listener",
      workflow_definition: definition,
      workflow_configurations: { turn_taking: turnTaking }
    }, { token: account.token })
    expect(created.status).toBe(200)
    expect(created.body.workflow_configurations).toEqual({ turn_taking: turnTaking })
    expect(created.body.workflow_definition.nodes[1].data.turn_taking).toEqual({ endpointing_ms: 1200 })

    const badAgent = await api.put(`/api/v1/workflow/${created.body.id}`, {
      workflow_configurations: {
        turn_taking: { endpointing_ms: 50, min_interrupt_words: "two", fallback_line: "", fallback_model: " ", wait: 1 }
      }
    }, { token: account.token })
    expect(badAgent.status).toBe(422)
    expect(badAgent.body.detail.map((problem: any) => problem.loc)).toEqual([
      ["body", "workflow_configurations", "turn_taking", "endpointing_ms"],
      ["body", "workflow_configurations", "turn_taking", "min_interrupt_words"],
      ["body", "workflow_configurations", "turn_taking", "fallback_line"],
      ["body", "workflow_configurations", "turn_taking", "fallback_model"],
      ["body", "workflow_configurations", "turn_taking", "wait"]
    ])
    expect(badAgent.body.detail[0].msg).toMatch(/300 to 1500/)
    // Nothing was saved: the workflow still has no draft.
    const versions = await api.get(`/api/v1/workflow/${created.body.id}/versions`, { token: account.token })
    expect(versions.body.map((version: any) => version.version_status)).toEqual(["published"])

    definition.nodes[1].data.turn_taking = { endpointing_ms: 5000 }
    const badNode = await api.post("/api/v1/workflow/create/definition", {
      name: "Too patient",
      workflow_definition: definition
    }, { token: account.token })
    expect(badNode.status).toBe(422)
    expect(badNode.body.detail.map((problem: any) => problem.loc)).toContainEqual(
      ["body", "workflow_definition", "nodes", 1, "data", "turn_taking", "endpointing_ms"]
    )
  })
})

describe("reading and listing", () => {
  it("lists the organization's workflows newest first, filters by status, and counts runs", async () => {
    const account = await newAccount(api)
    const first = await create(account, "First")
    const second = await create(account, "Second")
    await api.put(`/api/v1/workflow/${first.id}/status`, { status: "archived" }, { token: account.token })
    await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`
      INSERT INTO runs (organization_id, workflow_id, name, channel, mode, direction)
      VALUES (${account.organizationId}, ${second.id}, 'run 1', 'chat', 'textchat', 'inbound'),
             (${account.organizationId}, ${second.id}, 'run 2', 'chat', 'textchat', 'inbound')`))

    const all = await api.get("/api/v1/workflow/fetch", { token: account.token })
    expect(all.status).toBe(200)
    expect(all.body.map((workflow: any) => [workflow.name, workflow.status, workflow.total_runs])).toEqual([
      ["Second", "active", 2],
      ["First", "archived", 0]
    ])
    const active = await api.get("/api/v1/workflow/fetch?status=active", { token: account.token })
    expect(active.body.map((workflow: any) => workflow.name)).toEqual(["Second"])
    const archived = await api.get("/api/v1/workflow/fetch?status=archived", { token: account.token })
    expect(archived.body.map((workflow: any) => workflow.name)).toEqual(["First"])
    const bad = await api.get("/api/v1/workflow/fetch?status=deleted", { token: account.token })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(["query", "status"])

    const one = await api.get(`/api/v1/workflow/fetch/${second.id}`, { token: account.token })
    expect(one.status).toBe(200)
    expect(one.body).toMatchObject({ id: second.id, name: "Second", total_runs: 2 })
  })

  it("filters by several statuses given comma-separated, as the established platform documents", async () => {
    const account = await newAccount(api)
    const first = await create(account, "First")
    await create(account, "Second")
    await api.put(`/api/v1/workflow/${first.id}/status`, { status: "archived" }, { token: account.token })

    const names = async (query: string) => {
      const reply = await api.get(`/api/v1/workflow/fetch${query}`, { token: account.token })
      expect(reply.status).toBe(200)
      return reply.body.map((workflow: any) => workflow.name)
    }
    expect(await names("?status=active,archived")).toEqual(["Second", "First"])
    expect(await names("?status=archived,%20active")).toEqual(["Second", "First"])
    expect(await names("?status=active,active")).toEqual(["Second"])
    expect(await names("?status=")).toEqual(["Second", "First"])

    const bad = await api.get("/api/v1/workflow/fetch?status=active,deleted", { token: account.token })
    expect(bad.status).toBe(422)
    expect(bad.body.detail).toEqual([{
      loc: ["query", "status"],
      msg: expect.stringContaining("\"deleted\""),
      type: expect.any(String)
    }])
  })

  it("answers 404 for an unknown id and 422 for a malformed one", async () => {
    const account = await newAccount(api)
    expect((await api.get("/api/v1/workflow/fetch/999999999", { token: account.token })).status).toBe(404)
    const malformed = await api.get("/api/v1/workflow/fetch/abc", { token: account.token })
    expect(malformed.status).toBe(422)
    expect(malformed.body.detail[0].loc).toEqual(["path", "workflow_id"])
  })
})

describe("drafts, publishing and versions", () => {
  it("renames at once on a name-only PUT, without a draft, so publishing right after it answers 409 (as the README shows)", async () => {
    const account = await newAccount(api)
    const workflow = await create(account)
    const renamed = await api.put(`/api/v1/workflow/${workflow.id}`, { name: "Lead qualification (EU)" }, {
      token: account.token
    })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({
      name: "Lead qualification (EU)",
      version_number: 1,
      version_status: "published"
    })
    const publish = await api.post(`/api/v1/workflow/${workflow.id}/publish`, undefined, { token: account.token })
    expect(publish.status).toBe(409)
    expect(publish.body.detail).toMatch(/no draft to publish/)
    const versions = await api.get(`/api/v1/workflow/${workflow.id}/versions`, { token: account.token })
    expect(versions.body.map((version: any) => [version.version_number, version.version_status])).toEqual([[
      1,
      "published"
    ]])
  })

  it("edits a single draft created from the published version, then publishes it and archives the old version", async () => {
    const account = await newAccount(api)
    const workflow = await create(account)
    const edited: any = runnableDefinition()
    edited.nodes[1].data.prompt = "Ask about budget and timeline."

    const save = await api.put(`/api/v1/workflow/${workflow.id}`, { workflow_definition: edited }, {
      token: account.token
    })
    expect(save.status).toBe(200)
    expect(save.body).toMatchObject({ version_number: 2, version_status: "draft", workflow_definition: edited })
    expect(save.body.current_definition_id).not.toBe(workflow.current_definition_id)

    const again = await api.put(`/api/v1/workflow/${workflow.id}`, {
      name: "Renamed",
      workflow_configurations: { max_call_duration: 120 }
    }, { token: account.token })
    expect(again.body).toMatchObject({
      name: "Renamed",
      version_number: 2,
      version_status: "draft",
      workflow_definition: edited,
      workflow_configurations: { max_call_duration: 120 }
    })
    expect(again.body.current_definition_id).toBe(save.body.current_definition_id)

    const publish = await api.post(`/api/v1/workflow/${workflow.id}/publish`, undefined, { token: account.token })
    expect(publish.status).toBe(200)
    expect(publish.body).toMatchObject({ version_number: 2, version_status: "published", workflow_definition: edited })

    const versions = await api.get(`/api/v1/workflow/${workflow.id}/versions`, { token: account.token })
    expect(versions.status).toBe(200)
    expect(versions.body.map((version: any) => [version.version_number, version.version_status])).toEqual([[
      2,
      "published"
    ], [1, "archived"]])
    expect(versions.body[0].published_at).not.toBeNull()

    const nothing = await api.post(`/api/v1/workflow/${workflow.id}/publish`, undefined, { token: account.token })
    expect(nothing.status).toBe(409)
    expect(nothing.body.detail).toMatch(/no draft/)

    const next = await api.put(
      `/api/v1/workflow/${workflow.id}`,
      { template_context_variables: { first_name: "Bo" } },
      { token: account.token }
    )
    expect(next.body).toMatchObject({
      version_number: 3,
      version_status: "draft",
      workflow_definition: edited,
      template_context_variables: { first_name: "Bo" }
    })
  })

  it("saves an unfinished draft but refuses to publish it, listing every problem", async () => {
    const account = await newAccount(api)
    const workflow = await create(account)
    const unfinished: any = runnableDefinition()
    unfinished.nodes[1].data.prompt = ""
    unfinished.nodes.push({ id: "later", type: "agentNode", data: { name: "Later", prompt: "" } })

    const save = await api.put(`/api/v1/workflow/${workflow.id}`, { workflow_definition: unfinished }, {
      token: account.token
    })
    expect(save.status).toBe(200)

    const validation = await api.post(`/api/v1/workflow/${workflow.id}/validate`, undefined, { token: account.token })
    expect(validation.status).toBe(200)
    expect(validation.body.is_valid).toBe(false)
    expect(validation.body.version_status).toBe("draft")
    expect(validation.body.errors.map((error: any) => [error.kind, error.id, error.rule])).toEqual([
      ["node", "qualify", "node_data"],
      ["node", "later", "node_data"],
      ["node", "later", "node_unreachable"],
      ["node", "later", "dead_end"]
    ])

    const publish = await api.post(`/api/v1/workflow/${workflow.id}/publish`, undefined, { token: account.token })
    expect(publish.status).toBe(422)
    expect(publish.body.detail).toHaveLength(4)
    expect(publish.body.detail[0]).toEqual({
      loc: ["body", "workflow_definition", "nodes", 1, "data", "prompt"],
      msg: "Node \"qualify\" (agentNode): data.prompt must not be empty",
      type: "node_data"
    })

    const current = await api.get(`/api/v1/workflow/${workflow.id}/versions`, { token: account.token })
    expect(current.body.map((version: any) => [version.version_number, version.version_status])).toEqual([
      [2, "draft"],
      [1, "published"]
    ])
  })

  it("refuses to save a draft that is not a graph at all", async () => {
    const account = await newAccount(api)
    const workflow = await create(account)
    const reply = await api.put(`/api/v1/workflow/${workflow.id}`, {
      workflow_definition: { nodes: [{ id: "a", type: "http_request", data: {} }], edges: [] }
    }, { token: account.token })
    expect(reply.status).toBe(422)
    expect(reply.body.detail).toEqual([{
      loc: ["body", "workflow_definition", "nodes", 0, "type"],
      msg: expect.stringMatching(/must be one of/),
      type: "node_type_unknown"
    }])
    const versions = await api.get(`/api/v1/workflow/${workflow.id}/versions`, { token: account.token })
    expect(versions.body).toHaveLength(1)
  })

  it("reports a published, runnable workflow as valid", async () => {
    const account = await newAccount(api)
    const workflow = await create(account)
    const validation = await api.post(`/api/v1/workflow/${workflow.id}/validate`, undefined, { token: account.token })
    expect(validation.body).toEqual({ is_valid: true, version_number: 1, version_status: "published", errors: [] })
  })
})

describe("status and duplication", () => {
  it("archives and unarchives, and refuses any other status in the v1 422 shape", async () => {
    const account = await newAccount(api)
    const workflow = await create(account)
    const archive = await api.put(`/api/v1/workflow/${workflow.id}/status`, { status: "archived" }, {
      token: account.token
    })
    expect(archive.status).toBe(200)
    expect(archive.body.status).toBe("archived")
    const restore = await api.put(`/api/v1/workflow/${workflow.id}/status`, { status: "active" }, {
      token: account.token
    })
    expect(restore.body.status).toBe("active")

    const bad = await api.put(`/api/v1/workflow/${workflow.id}/status`, { status: "deleted" }, { token: account.token })
    expect(bad.status).toBe(422)
    expect(bad.body).toEqual({ detail: [{ loc: ["body", "status"], msg: expect.any(String), type: "literal_error" }] })
    const missing = await api.put(`/api/v1/workflow/${workflow.id}/status`, {}, { token: account.token })
    expect(missing.body).toEqual({ detail: [{ loc: ["body", "status"], msg: "Field required", type: "missing" }] })
  })

  it("duplicates the published version and the open draft into a new workflow", async () => {
    const account = await newAccount(api)
    const workflow = await create(account, "Original")
    const draft: any = runnableDefinition()
    draft.nodes[2].data.prompt = "Say goodbye warmly."
    await api.put(`/api/v1/workflow/${workflow.id}`, { workflow_definition: draft }, { token: account.token })

    const copy = await api.post(`/api/v1/workflow/${workflow.id}/duplicate`, undefined, { token: account.token })
    expect(copy.status).toBe(200)
    expect(copy.body.id).not.toBe(workflow.id)
    expect(copy.body.workflow_uuid).not.toBe(workflow.workflow_uuid)
    expect(copy.body).toMatchObject({
      name: "Original (copy)",
      version_number: 2,
      version_status: "draft",
      workflow_definition: draft,
      total_runs: 0
    })
    const versions = await api.get(`/api/v1/workflow/${copy.body.id}/versions`, { token: account.token })
    expect(versions.body.map((version: any) => [version.version_number, version.version_status])).toEqual([
      [2, "draft"],
      [1, "published"]
    ])
    expect(versions.body[1].workflow_definition).toEqual(runnableDefinition())
  })
})

describe("access", () => {
  it("hides one organization's workflows from another on every endpoint (404)", async () => {
    const owner = await newAccount(api, "owner")
    const other = await newAccount(api, "other")
    const workflow = await create(owner)
    const as = { token: other.token }
    const calls = [
      () => api.get(`/api/v1/workflow/fetch/${workflow.id}`, as),
      () => api.put(`/api/v1/workflow/${workflow.id}`, { name: "Stolen" }, as),
      () => api.post(`/api/v1/workflow/${workflow.id}/publish`, undefined, as),
      () => api.get(`/api/v1/workflow/${workflow.id}/versions`, as),
      () => api.post(`/api/v1/workflow/${workflow.id}/validate`, undefined, as),
      () => api.put(`/api/v1/workflow/${workflow.id}/status`, { status: "archived" }, as),
      () => api.post(`/api/v1/workflow/${workflow.id}/duplicate`, undefined, as)
    ]
    const replies = []
    for (const call of calls) replies.push(await call())
    expect(replies.map((reply) => reply.status)).toEqual([404, 404, 404, 404, 404, 404, 404])
    expect(replies[0]!.body).toEqual({ detail: `Workflow ${workflow.id} not found` })
    expect((await api.get("/api/v1/workflow/fetch", as)).body).toEqual([])
    const untouched = await api.get(`/api/v1/workflow/fetch/${workflow.id}`, { token: owner.token })
    expect(untouched.body).toMatchObject({ name: "Sales agent", status: "active", version_number: 1 })
  })

  it("requires credentials, agents:read to read and agents:write to change", async () => {
    const account = await newAccount(api)
    const workflow = await create(account)
    expect((await api.get("/api/v1/workflow/fetch")).status).toBe(401)
    const readOnly = await newApiKey(api, account, ["agents:read"])
    expect((await api.get(`/api/v1/workflow/fetch/${workflow.id}`, { apiKey: readOnly })).status).toBe(200)
    const refused = await api.put(`/api/v1/workflow/${workflow.id}/status`, { status: "archived" }, {
      apiKey: readOnly
    })
    expect(refused.status).toBe(403)
    expect(refused.body.detail).toMatch(/agents:write/)
    const writeOnly = await newApiKey(api, account, ["agents:write"])
    expect((await api.get("/api/v1/workflow/fetch", { apiKey: writeOnly })).status).toBe(403)
    expect((await api.post(`/api/v1/workflow/${workflow.id}/duplicate`, undefined, { apiKey: writeOnly })).status).toBe(
      200
    )
  })
})
