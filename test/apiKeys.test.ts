import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

describe("API keys", () => {
  it("shows the key once on creation and only its prefix afterwards", async () => {
    const account = await newAccount(api)
    const created = await api.post("/api/v1/user/api-keys", { name: "CI" }, { token: account.token })
    expect(created.status).toBe(200)
    expect(Object.keys(created.body).sort()).toEqual(["api_key", "created_at", "id", "key_prefix", "name", "scopes"])
    expect(created.body.api_key).toMatch(/^tgk_[A-Za-z0-9_-]{43}$/)
    expect(created.body.api_key.startsWith(created.body.key_prefix)).toBe(true)
    expect(created.body.scopes).toContain("agents:read")

    const listed = await api.get("/api/v1/user/api-keys", { token: account.token })
    expect(listed.status).toBe(200)
    expect(listed.body).toHaveLength(1)
    expect(listed.body[0]).toMatchObject({
      id: created.body.id,
      name: "CI",
      key_prefix: created.body.key_prefix,
      is_active: true
    })
    expect(JSON.stringify(listed.body)).not.toContain(created.body.api_key)
  })

  it("authenticates v1 requests by X-API-Key or Bearer", async () => {
    const account = await newAccount(api)
    const key = await newApiKey(api, account)
    const viaHeader = await api.get("/api/v1/auth/me", { apiKey: key })
    const viaBearer = await api.get("/api/v1/auth/me", { token: key })
    expect(viaHeader.status).toBe(200)
    expect(viaHeader.body.organization_id).toBe(account.organizationId)
    expect(viaBearer.body).toEqual(viaHeader.body)
  })

  it("refuses a revoked key at once and accepts it again after reactivation", async () => {
    const account = await newAccount(api)
    const key = await newApiKey(api, account)
    const [{ id }] = (await api.get("/api/v1/user/api-keys", { token: account.token })).body
    expect((await api.get("/api/v2/status", { apiKey: key })).status).toBe(200)

    const revoked = await api.delete(`/api/v1/user/api-keys/${id}`, { token: account.token })
    expect(revoked.status).toBe(200)
    expect(revoked.body.is_active).toBe(false)
    const refused = await api.get("/api/v2/status", { apiKey: key })
    expect(refused.status).toBe(401)
    expect(refused.body.error.code).toBe("unauthorized")

    const reactivated = await api.put(`/api/v1/user/api-keys/${id}/reactivate`, undefined, { token: account.token })
    expect(reactivated.status).toBe(200)
    expect(reactivated.body.is_active).toBe(true)
    expect((await api.get("/api/v2/status", { apiKey: key })).status).toBe(200)
  })

  it("lists revoked keys only when include_archived is true, as the established platform does", async () => {
    const account = await newAccount(api)
    const kept = await api.post("/api/v1/user/api-keys", { name: "kept" }, { token: account.token })
    const gone = await api.post("/api/v1/user/api-keys", { name: "gone" }, { token: account.token })
    expect((await api.delete(`/api/v1/user/api-keys/${gone.body.id}`, { token: account.token })).status).toBe(200)

    const names = async (query: string) =>
      (await api.get(`/api/v1/user/api-keys${query}`, { token: account.token })).body.map((key: any) => key.name)
    expect(await names("")).toEqual(["kept"])
    expect(await names("?include_archived=false")).toEqual(["kept"])
    expect(await names("?include_archived=true")).toEqual(["kept", "gone"])
    expect(await names("?include_archived=1")).toEqual(["kept", "gone"])

    const bad = await api.get("/api/v1/user/api-keys?include_archived=maybe", { token: account.token })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(["query", "include_archived"])
    expect(kept.status).toBe(200)
  })

  it("requires a session to manage keys", async () => {
    const account = await newAccount(api)
    const key = await newApiKey(api, account)
    const reply = await api.post("/api/v1/user/api-keys", { name: "from a key" }, { apiKey: key })
    expect(reply.status).toBe(403)
    expect(reply.body.detail).toMatch(/session/)
  })

  it("validates name and scopes", async () => {
    const account = await newAccount(api)
    const reply = await api.post("/api/v1/user/api-keys", { name: "", scopes: ["agents:read", "root"] }, {
      token: account.token
    })
    expect(reply.status).toBe(422)
    expect(reply.body.detail.map((problem: any) => problem.loc)).toEqual([["body", "name"], ["body", "scopes", 1]])
  })

  it("answers 404 for a key id that does not exist or is not a number's worth", async () => {
    const account = await newAccount(api)
    expect((await api.delete("/api/v1/user/api-keys/999999999", { token: account.token })).status).toBe(404)
    const bad = await api.delete("/api/v1/user/api-keys/abc", { token: account.token })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0].loc).toEqual(["path", "id"])
  })
})

describe("scopes", () => {
  it("lets a key use only the endpoints its scopes allow", async () => {
    const account = await newAccount(api)
    const key = await newApiKey(api, account, ["usage:read"])
    const created = (await api.get("/api/v1/user/api-keys", { token: account.token })).body[0]
    expect(created.scopes).toEqual(["usage:read"])
    expect((await api.get("/api/v2/status", { apiKey: key })).status).toBe(200)
  })
})

describe("v2 authentication", () => {
  it("requires an API key: 401 when missing or invalid, and session tokens are not accepted", async () => {
    const account = await newAccount(api)
    const missing = await api.get("/api/v2/status")
    expect(missing.status).toBe(401)
    expect(missing.body).toEqual({ error: { code: "unauthorized", message: expect.stringMatching(/API key/) } })
    expect((await api.get("/api/v2/status", { apiKey: "tgk_not-a-real-key" })).status).toBe(401)
    const session = await api.get("/api/v2/status", { token: account.token })
    expect(session.status).toBe(401)
    expect(session.body.error.message).toMatch(/requires an API key/)
  })

  it("reports liveness with a valid key", async () => {
    const account = await newAccount(api)
    const key = await newApiKey(api, account)
    const reply = await api.get("/api/v2/status", { apiKey: key })
    expect(reply.status).toBe(200)
    expect(reply.body.data).toMatchObject({ status: "ok", version: expect.any(String) })
  })
})

describe("tenant isolation", () => {
  it("keeps one organization's keys invisible and untouchable to another", async () => {
    const alice = await newAccount(api, "alice")
    const bob = await newAccount(api, "bob")
    const aliceKey = await newApiKey(api, alice)
    const [{ id }] = (await api.get("/api/v1/user/api-keys", { token: alice.token })).body

    expect((await api.get("/api/v1/user/api-keys", { token: bob.token })).body).toEqual([])
    expect((await api.delete(`/api/v1/user/api-keys/${id}`, { token: bob.token })).status).toBe(404)
    expect((await api.put(`/api/v1/user/api-keys/${id}/reactivate`, undefined, { token: bob.token })).status).toBe(404)
    expect((await api.get("/api/v2/status", { apiKey: aliceKey })).status).toBe(200)

    const me = await api.get("/api/v1/auth/me", { apiKey: aliceKey })
    expect(me.body.organization_id).toBe(alice.organizationId)
  })
})
