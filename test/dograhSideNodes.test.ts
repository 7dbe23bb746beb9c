import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(async () => {
  await server?.close()
})

const bearer = async (account: TestAccount) => {
  const created = await api.post("/api/v1/credentials", {
    name: `Bearer ${Math.random()}`,
    credential_type: "bearer_token",
    credential_data: { token: "crm-secret" }
  }, { token: account.token })
  expect(created.status).toBe(200)
  return created.body.uuid as string
}

/** A Dograh export's shape: conversation nodes plus a webhook and a trigger node without edges. */
const dograhExport = (credentialUuid: string, extra: { nodes?: Array<unknown>; edges?: Array<unknown> } = {}) => ({
  nodes: [
    { id: "1", type: "startCall", position: { x: 0, y: 0 }, data: { name: "Start", prompt: "Greet.", greeting: "Hi" } },
    { id: "2", type: "endCall", position: { x: 0, y: 200 }, data: { name: "End", prompt: "Say goodbye." } },
    {
      id: "3",
      type: "webhook",
      position: { x: 300, y: 0 },
      data: {
        name: "Notify CRM",
        enabled: true,
        http_method: "POST",
        endpoint_url: "https://crm.example.com/calls",
        credential_uuid: credentialUuid,
        custom_headers: [{ key: "X-Source", value: "dograh" }],
        payload_template: { call_id: "{{workflow_run_id}}", rsvp: "{{gathered_context.rsvp}}" }
      }
    },
    {
      id: "4",
      type: "trigger",
      position: { x: 300, y: 200 },
      data: { name: "API Trigger", enabled: true, trigger_path: "crm-callback_1" }
    },
    ...(extra.nodes ?? [])
  ],
  edges: [
    { id: "e1", source: "1", target: "2", data: { label: "Done", condition: "The caller is done" } },
    ...(extra.edges ?? [])
  ]
})

const create = (account: TestAccount, definition: unknown) =>
  api.post("/api/v1/workflow/create/definition", { name: "Dograh agent", workflow_definition: definition }, {
    token: account.token
  })

describe("Dograh webhook and trigger nodes", () => {
  it("are accepted and kept as given, so a Dograh export round-trips", async () => {
    const account = await newAccount(api, "side-nodes")
    const definition = dograhExport(await bearer(account))
    const created = await create(account, definition)
    expect(created.status).toBe(200)
    const fetched = await api.get(`/api/v1/workflow/fetch/${created.body.id}`, { token: account.token })
    expect(fetched.status).toBe(200)
    expect(fetched.body.workflow_definition.nodes).toEqual(definition.nodes)
  })

  it("refuses edges to or from them, naming the edge", async () => {
    const account = await newAccount(api, "side-edges")
    const created = await create(
      account,
      dograhExport(await bearer(account), {
        edges: [{ id: "e2", source: "1", target: "3", data: { label: "Notify", condition: "Always" } }]
      })
    )
    expect(created.status).toBe(422)
    expect(JSON.stringify(created.body)).toContain("webhook node takes no part in the conversation")
  })

  it("refuses another organization's credential, a bad URL or method, and a trigger path used twice", async () => {
    const owner = await newAccount(api, "side-owner")
    const other = await newAccount(api, "side-other")
    const foreign = await create(other, dograhExport(await bearer(owner)))
    expect(foreign.status).toBe(422)
    expect(JSON.stringify(foreign.body)).toContain("is not a credential of this organization")

    const definition = dograhExport(await bearer(other), {
      nodes: [{ id: "5", type: "trigger", data: { name: "Again", trigger_path: "crm-callback_1" } }, {
        id: "6",
        type: "webhook",
        data: { name: "Bad", http_method: "FETCH", endpoint_url: "ftp://example.com" }
      }]
    })
    const refused = await create(other, definition)
    expect(refused.status).toBe(422)
    const text = JSON.stringify(refused.body)
    expect(text).toContain(`trigger_path \\"crm-callback_1\\" is already used by node \\"4\\"`)
    expect(text).toContain("must be an http or https URL")
    expect(text).toContain(`data.http_method: Expected \\"GET\\"`)
  })
})

const qaNode = (data: Record<string, unknown>) => ({
  id: "5",
  type: "qa",
  position: { x: 600, y: 0 },
  data: { name: "QA Review", ...data }
})

describe("Dograh qa nodes", () => {
  it("become the agent's quality review setting when saved, and stay in the definition", async () => {
    const account = await newAccount(api, "qa-node")
    const definition = dograhExport(await bearer(account), {
      nodes: [qaNode({
        qa_enabled: true,
        qa_use_workflow_llm: true,
        qa_system_prompt: "Review the call and answer in JSON with score and tags.",
        qa_min_call_duration: 30,
        qa_voicemail_calls: false,
        qa_sample_rate: 50
      })]
    })
    const created = await create(account, definition)
    expect(created.status).toBe(200)
    expect(created.body.workflow_configurations.quality_review).toEqual({
      enabled: true,
      rubric: { prompt: "Review the call and answer in JSON with score and tags." },
      min_duration_seconds: 30,
      sample_rate: 50,
      include_voicemail: false,
      model: null
    })
    const fetched = await api.get(`/api/v1/workflow/fetch/${created.body.id}`, { token: account.token })
    expect(fetched.body.workflow_definition.nodes.find((node: any) => node.type === "qa").data.qa_sample_rate).toBe(50)

    // Editing the node in a later save changes the setting; Dograh's defaults fill what it leaves out.
    const edited = await api.put(`/api/v1/workflow/${created.body.id}`, {
      workflow_definition: dograhExport(await bearer(account), {
        nodes: [qaNode({ qa_enabled: false, qa_use_workflow_llm: false, qa_model: "gpt-4o-mini" })]
      })
    }, { token: account.token })
    expect(edited.status).toBe(200)
    expect(edited.body.workflow_configurations.quality_review).toEqual({
      enabled: false,
      rubric: "default",
      min_duration_seconds: 15,
      sample_rate: 100,
      include_voicemail: false,
      model: "gpt-4o-mini"
    })
  })

  it("refuses a qa node carrying a model key, a second qa node, and edges to one", async () => {
    const account = await newAccount(api, "qa-refused")
    const credential = await bearer(account)
    const keyed = await create(account, dograhExport(credential, { nodes: [qaNode({ qa_api_key: "sk-live-123" })] }))
    expect(keyed.status).toBe(422)
    expect(keyed.body.detail[0].loc).toEqual(["body", "workflow_definition", "nodes", 4, "data", "qa_api_key"])
    expect(JSON.stringify(keyed.body)).not.toContain("sk-live-123")

    const twice = await create(
      account,
      dograhExport(credential, { nodes: [qaNode({}), { ...qaNode({}), id: "6" }] })
    )
    expect(twice.status).toBe(422)
    expect(twice.body.detail[0].msg).toBe("an agent has at most one qa node")

    const linked = await create(
      account,
      dograhExport(credential, { nodes: [qaNode({})], edges: [{ id: "e9", source: "1", target: "5", data: {} }] })
    )
    expect(linked.status).toBe(422)
    expect(JSON.stringify(linked.body)).toContain("e9")
  })
})
