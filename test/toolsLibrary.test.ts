import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type LoopbackApi, startLoopbackApi } from "./support/loopbackApi.ts"
import { type RunningServer, startServer, uniqueEmail } from "./support/server.ts"

let server: RunningServer
let api: Client
let target: LoopbackApi

beforeAll(async () => {
  target = await startLoopbackApi()
  server = await startServer()
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await target?.close()
})

const TOOLS = "/api/v1/tools"
const CREDENTIALS = "/api/v1/credentials"

const addMember = async (owner: TestAccount, role: "admin" | "member"): Promise<{ token: string }> => {
  const email = uniqueEmail(role)
  const password = `${role}-password-${Math.random().toString(36).slice(2)}`
  const added = await api.post("/api/v1/organizations/members", { email, password, name: role, role }, {
    token: owner.token
  })
  expect(added.status).toBe(200)
  const login = await api.post("/api/v1/auth/login", { email, password })
  return { token: login.body.token }
}

const orderTool = (url: string, extra: Record<string, unknown> = {}) => ({
  name: "Look up order",
  description: "Finds an order's status by its number",
  definition: {
    type: "http_api",
    config: {
      method: "GET",
      url: `${url}/orders/{{order_id}}`,
      parameters: [{ name: "order_id", type: "string", description: "The order number", required: true }],
      ...extra
    }
  }
})

describe("credentials", () => {
  it("stores credential_data encrypted and only ever shows it masked", async () => {
    const owner = await newAccount(api, "cred")
    const created = await api.post(CREDENTIALS, {
      name: "CRM",
      credential_type: "bearer_token",
      credential_data: { token: "crm-secret-token-0123456789" }
    }, { token: owner.token })
    expect(created.status).toBe(200)
    expect(created.body.credential_data).toEqual({ token: "****6789" })
    expect(created.body.bound_host).toBeNull()
    const listed = await api.get(CREDENTIALS, { token: owner.token })
    expect(JSON.stringify(listed.body)).not.toContain("crm-secret-token")
    const fetched = await api.get(`${CREDENTIALS}/${created.body.uuid}`, { token: owner.token })
    expect(fetched.body.credential_data).toEqual({ token: "****6789" })

    const wrongShape = await api.post(CREDENTIALS, {
      name: "Bad",
      credential_type: "api_key",
      credential_data: { key: "x" }
    }, { token: owner.token })
    expect(wrongShape.status).toBe(422)
    expect(wrongShape.body.detail.map((problem: any) => problem.loc)).toEqual(
      expect.arrayContaining([["body", "credential_data", "api_key"], ["body", "credential_data", "key"]])
    )
    const taken = await api.post(CREDENTIALS, {
      name: "CRM",
      credential_type: "none",
      credential_data: {}
    }, { token: owner.token })
    expect(taken.status).toBe(409)
  })

  it("keeps a secret sent back masked, and refuses the mask where nothing is stored", async () => {
    const owner = await newAccount(api, "cred")
    const created = await api.post(CREDENTIALS, {
      name: "Key",
      credential_type: "api_key",
      credential_data: { header_name: "X-Api-Key", api_key: "key-value-abcdefgh1234" }
    }, { token: owner.token })
    const renamed = await api.put(`${CREDENTIALS}/${created.body.uuid}`, {
      name: "Key 2",
      credential_data: { header_name: "X-Other", api_key: "****1234" }
    }, { token: owner.token })
    expect(renamed.status).toBe(200)
    expect(renamed.body.credential_data).toEqual({ header_name: "X-Other", api_key: "****1234" })
    const retyped = await api.put(`${CREDENTIALS}/${created.body.uuid}`, {
      credential_type: "custom_header",
      credential_data: { header_name: "X-Other", header_value: "****1234" }
    }, { token: owner.token })
    expect(retyped.status).toBe(422)
    expect(retyped.body.detail[0].loc).toEqual(["body", "credential_data", "header_value"])
  })

  it("is changed by admins only, read by every member, and invisible to other organizations", async () => {
    const owner = await newAccount(api, "cred")
    const member = await addMember(owner, "member")
    const admin = await addMember(owner, "admin")
    const body = {
      name: "Basic",
      credential_type: "basic_auth",
      credential_data: { username: "u", password: "pw-123456789012" }
    }
    expect((await api.post(CREDENTIALS, body, { token: member.token })).status).toBe(403)
    const created = await api.post(CREDENTIALS, body, { token: admin.token })
    expect(created.status).toBe(200)
    expect((await api.get(CREDENTIALS, { token: member.token })).body).toHaveLength(1)
    expect((await api.delete(`${CREDENTIALS}/${created.body.uuid}`, { token: member.token })).status).toBe(403)

    const stranger = await newAccount(api, "stranger")
    expect((await api.get(CREDENTIALS, { token: stranger.token })).body).toEqual([])
    expect((await api.get(`${CREDENTIALS}/${created.body.uuid}`, { token: stranger.token })).status).toBe(404)
    expect((await api.put(`${CREDENTIALS}/${created.body.uuid}`, { name: "mine" }, { token: stranger.token })).status)
      .toBe(404)
    expect((await api.delete(`${CREDENTIALS}/${created.body.uuid}`, { token: stranger.token })).status).toBe(404)
    expect((await api.delete(`${CREDENTIALS}/${created.body.uuid}`, { token: admin.token })).status).toBe(200)
  })
})

describe("tool library", () => {
  it("creates, lists, updates, archives and restores a tool in Dograh's shape", async () => {
    const owner = await newAccount(api, "tools")
    const created = await api.post(TOOLS, orderTool(target.url), { token: owner.token })
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({
      name: "Look up order",
      category: "http_api",
      status: "active",
      function_name: "look_up_order",
      definition: { type: "http_api", config: { method: "GET" } }
    })
    const uuid = created.body.tool_uuid
    expect((await api.get(TOOLS, { token: owner.token })).body.map((tool: any) => tool.tool_uuid)).toEqual([uuid])

    const updated = await api.put(`${TOOLS}/${uuid}`, { description: "Order status" }, { token: owner.token })
    expect(updated.body.description).toBe("Order status")

    const archived = await api.delete(`${TOOLS}/${uuid}`, { token: owner.token })
    expect(archived.body).toEqual({ status: "archived", tool_uuid: uuid })
    expect((await api.get(TOOLS, { token: owner.token })).body).toEqual([])
    expect((await api.get(`${TOOLS}?status=archived`, { token: owner.token })).body).toHaveLength(1)
    const restored = await api.post(`${TOOLS}/${uuid}/unarchive`, {}, { token: owner.token })
    expect(restored.body.status).toBe("active")
  })

  it("refuses a URL whose host is a placeholder, a category that does not match, and a foreign credential", async () => {
    const owner = await newAccount(api, "tools")
    const templatedHost = await api.post(TOOLS, {
      ...orderTool(target.url),
      definition: { type: "http_api", config: { method: "GET", url: "https://{{host}}/orders" } }
    }, { token: owner.token })
    expect(templatedHost.status).toBe(422)
    expect(templatedHost.body.detail[0].loc).toEqual(["body", "definition", "config", "url"])

    const mismatch = await api.post(TOOLS, { ...orderTool(target.url), category: "calculator" }, { token: owner.token })
    expect(mismatch.status).toBe(422)

    const stranger = await newAccount(api, "stranger")
    const theirs = await api.post(CREDENTIALS, {
      name: "Theirs",
      credential_type: "bearer_token",
      credential_data: { token: "their-token-0123456789" }
    }, { token: stranger.token })
    const borrowed = await api.post(TOOLS, orderTool(target.url, { credential_uuid: theirs.body.uuid }), {
      token: owner.token
    })
    expect(borrowed.status).toBe(422)
    expect(borrowed.body.detail[0].loc).toEqual(["body", "definition", "config", "credential_uuid"])
  })

  it("keeps each organization's tools to itself, for sessions and API keys alike", async () => {
    const owner = await newAccount(api, "tools")
    const created = await api.post(TOOLS, orderTool(target.url), { token: owner.token })
    const uuid = created.body.tool_uuid
    const stranger = await newAccount(api, "stranger")
    expect((await api.get(TOOLS, { token: stranger.token })).body).toEqual([])
    expect((await api.get(`${TOOLS}/${uuid}`, { token: stranger.token })).status).toBe(404)
    expect((await api.put(`${TOOLS}/${uuid}`, { name: "x" }, { token: stranger.token })).status).toBe(404)
    expect((await api.delete(`${TOOLS}/${uuid}`, { token: stranger.token })).status).toBe(404)
    expect((await api.post(`${TOOLS}/${uuid}/test`, {}, { token: stranger.token })).status).toBe(404)

    const readOnly = await newApiKey(api, owner, ["agents:read"])
    expect((await api.get(`${TOOLS}/${uuid}`, { apiKey: readOnly })).status).toBe(200)
    expect((await api.post(TOOLS, orderTool(target.url), { apiKey: readOnly })).status).toBe(403)
    const member = await addMember(owner, "member")
    expect((await api.post(TOOLS, orderTool(target.url), { token: member.token })).status).toBe(200)
  })

  it("exposes the same library on v2, with API keys and v2 envelopes", async () => {
    const owner = await newAccount(api, "v2tools")
    const key = await newApiKey(api, owner)
    const created = await api.post("/api/v2/tools", orderTool(target.url), { apiKey: key })
    expect(created.status).toBe(200)
    const uuid = created.body.data.tool_uuid
    expect((await api.get(`${TOOLS}/${uuid}`, { token: owner.token })).body.name).toBe("Look up order")
    await api.post("/api/v2/tools", { name: "Calc", definition: { type: "calculator" } }, { apiKey: key })
    const page = await api.get("/api/v2/tools?page=2&page_size=1", { apiKey: key })
    expect(page.body.pagination).toEqual({ page: 2, page_size: 1, total_items: 2, total_pages: 2 })
    expect(page.body.data.map((tool: any) => tool.name)).toEqual(["Calc"])
    const archived = await api.post(`/api/v2/tools/${uuid}/archive`, {}, { apiKey: key })
    expect(archived.body.data.status).toBe("archived")
    const tested = await api.post(`/api/v2/tools/${page.body.data[0].tool_uuid}/test`, {
      llm_params: { expression: "1+1" }
    }, { apiKey: key })
    expect(tested.body.data).toMatchObject({ status: "success", data: { result: 2 } })

    const stranger = await newAccount(api, "stranger")
    const theirKey = await newApiKey(api, stranger)
    const hidden = await api.get(`/api/v2/tools/${uuid}`, { apiKey: theirKey })
    expect(hidden.status).toBe(404)
    expect(hidden.body.error.code).toBe("not_found")
    expect((await api.get("/api/v2/tools", { token: owner.token })).status).toBe(401)
  })

  it("keeps a tool's uuid when it is given (an agent moved from Dograh names its tools by it), once", async () => {
    const owner = await newAccount(api, "import")
    const uuid = "0b6c9a52-4f1e-4c5b-9a43-6b1f8f0c2d11"
    const created = await api.post(TOOLS, { tool_uuid: uuid, ...orderTool(target.url) }, { token: owner.token })
    expect(created.status).toBe(200)
    expect(created.body.tool_uuid).toBe(uuid)
    const stranger = await newAccount(api, "stranger")
    const again = await api.post(TOOLS, { tool_uuid: uuid, ...orderTool(target.url) }, { token: stranger.token })
    expect(again.status).toBe(409)
    const agent = await api.post("/api/v1/workflow/create/definition", {
      name: "From Dograh",
      workflow_definition: {
        nodes: [
          { id: "1", type: "startCall", data: { name: "Start", prompt: "Help.", tool_uuids: [uuid] } },
          { id: "2", type: "endCall", data: { name: "End", prompt: "Bye." } }
        ],
        edges: [{ id: "e", source: "1", target: "2", data: { label: "Done", condition: "Done" } }]
      }
    }, { token: owner.token })
    expect(agent.status).toBe(200)
  })
})

describe("call-control tools", () => {
  it("takes transfer destinations that are E.164 numbers or SIP URIs, and names each one that is not", async () => {
    const owner = await newAccount(api, "transferdest")
    const saved = await api.post(TOOLS, {
      name: "Transfer",
      definition: {
        type: "transfer_call",
        config: {
          timeout: 20,
          destinations: [
            { name: "sales", destination: "+14155550100" },
            { name: "support", destination: "sip:support@pbx.example.com", description: "Technical help" },
            { name: "owner", destination: "{{owner_phone}}" }
          ]
        }
      }
    }, { token: owner.token })
    expect(saved.status).toBe(200)
    expect(saved.body.definition.config.destinations).toHaveLength(3)

    const refused = await api.post(TOOLS, {
      name: "Bad transfer",
      definition: {
        type: "transfer_call",
        config: {
          destination: "0145678901",
          destinations: [{ name: "a", destination: "+1415" }, { name: "b", destination: "sip:nohost" }],
          destination_source: "context_mapping",
          context_mapping: {
            rules: [{ context_path: "region", routes: [{ context_value: "EU", destination: "london desk" }] }],
            fallback_destination: "+44 20 7123 4567"
          }
        }
      }
    }, { token: owner.token })
    expect(refused.status).toBe(422)
    const config = ["body", "definition", "config"]
    expect(refused.body.detail.map((problem: any) => problem.loc)).toEqual([
      [...config, "destination"],
      [...config, "destinations", 0, "destination"],
      [...config, "destinations", 1, "destination"],
      [...config, "context_mapping", "rules", 0, "routes", 0, "destination"],
      [...config, "context_mapping", "fallback_destination"]
    ])
    expect(refused.body.detail[0].msg).toContain("E.164")
    expect(refused.body.detail[0].type).toBe("value_error")

    const duplicate = await api.post(TOOLS, {
      name: "Twice",
      definition: {
        type: "transfer_call",
        config: {
          destinations: [{ name: "Sales", destination: "+14155550100" }, { name: "sales", destination: "+14155550101" }]
        }
      }
    }, { token: owner.token })
    expect(duplicate.status).toBe(422)
  })

  it("stores Dograh's end_call and transfer_call definitions, refuses malformed ones, and cannot test them", async () => {
    const owner = await newAccount(api, "calltools")
    const transfer = await api.post(TOOLS, {
      name: "Transfer to sales",
      category: "transfer_call",
      definition: {
        schema_version: 1,
        type: "transfer_call",
        config: {
          destination_source: "context_mapping",
          messageType: "custom",
          customMessage: "Transferring you now.",
          timeout: 45,
          context_mapping: {
            rules: [{ context_path: "region", routes: [{ context_value: "EU", destination: "+442071234567" }] }],
            fallback_destination: "+14155550100"
          }
        }
      }
    }, { token: owner.token })
    expect(transfer.status).toBe(200)
    expect(transfer.body.definition.config).toMatchObject({ destination_source: "context_mapping", timeout: 45 })
    const ending = await api.post(TOOLS, {
      name: "Hang up",
      definition: { type: "end_call", config: { messageType: "custom", customMessage: "Bye!", endCallReason: true } }
    }, { token: owner.token })
    expect(ending.status).toBe(200)
    expect(ending.body.definition.config).toEqual({ messageType: "custom", customMessage: "Bye!", endCallReason: true })

    const refusals = await Promise.all([
      { destination_source: "dynamic" },
      { destination: "+14155550100", timeout: 600 },
      {
        destination_source: "context_mapping",
        context_mapping: {
          rules: [{
            context_path: "region",
            routes: [{ context_value: "EU", destination: "+1" }, { context_value: "eu", destination: "+2" }]
          }]
        }
      },
      { destination_source: "dynamic", resolver: { url: "ftp://resolver.example.com" } }
    ].map((config) =>
      api.post(TOOLS, { name: "Bad transfer", definition: { type: "transfer_call", config } }, { token: owner.token })
    ))
    expect(refusals.map((refusal) => refusal.status)).toEqual([422, 422, 422, 422])
    const badEnd = await api.post(TOOLS, {
      name: "Bad end",
      definition: { type: "end_call", config: { messageType: "shout" } }
    }, { token: owner.token })
    expect(badEnd.status).toBe(422)

    const tested = await api.post(`${TOOLS}/${transfer.body.tool_uuid}/test`, {}, { token: owner.token })
    expect(tested.status).toBe(422)

    // A resolver's credential is the organization's and bound to the resolver's host, like any tool's.
    const stranger = await newAccount(api, "calltools")
    const theirs = await api.post(CREDENTIALS, {
      name: "Theirs",
      credential_type: "bearer_token",
      credential_data: { token: "their-token-0123456789" }
    }, { token: stranger.token })
    const borrowed = await api.post(TOOLS, {
      name: "Dynamic transfer",
      definition: {
        type: "transfer_call",
        config: {
          destination_source: "dynamic",
          resolver: { url: `${target.url}/route`, credential_uuid: theirs.body.uuid }
        }
      }
    }, { token: owner.token })
    expect(borrowed.status).toBe(422)
    expect(borrowed.body.detail[0].loc).toEqual(["body", "definition", "config", "resolver", "credential_uuid"])
  })
})
