import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type RunningServer, startServer, uniqueEmail } from "./support/server.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

const MEMBERS = "/api/v1/organizations/members"
const MODEL = "/api/v1/organizations/model-configurations"
const TELEPHONY = "/api/v1/organizations/telephony-configs"
const KEYS = "/api/v1/user/api-keys"
// A loopback api_base_url: with the test's loopback PUBLIC_URL, a configuration of the real carrier is refused.
const TWILIO = {
  provider: "twilio",
  account_sid: "AC11112222333344445555",
  auth_token: "tw-secret-token-abcd1234",
  api_base_url: "http://127.0.0.1:9"
}
const LLM = { llm: { provider: "openai", model: "gpt-4o-mini", api_key: "sk-role-test-1234" } }

/** Adds a member to `by`'s organization through the API and signs them in. */
const addMember = async (
  by: { readonly token: string },
  role: "owner" | "admin" | "member",
  name: string = role
): Promise<TestAccount> => {
  const email = uniqueEmail(name)
  const password = `${name}-password-${Math.random().toString(36).slice(2)}`
  const added = await api.post(MEMBERS, { email, password, name, role }, { token: by.token })
  if (added.status !== 200) throw new Error(`adding a member failed: ${added.status} ${JSON.stringify(added.body)}`)
  const login = await api.post("/api/v1/auth/login", { email, password })
  if (login.status !== 200) throw new Error(`the new member could not log in: ${login.status}`)
  return {
    userId: added.body.user_id,
    email,
    password,
    token: login.body.token,
    organizationId: login.body.user.organization_id
  }
}

/** An organization with one owner, one admin and one member. */
const team = async () => {
  const owner = await newAccount(api, "owner")
  const admin = await addMember(owner, "admin")
  const member = await addMember(owner, "member")
  return { owner, admin, member }
}

const keyIdOf = async (person: { readonly token: string }) => {
  await api.post(KEYS, { name: "mine" }, { token: person.token })
  const mine = (await api.get(KEYS, { token: person.token })).body as Array<any>
  return mine[mine.length - 1].id as number
}

describe("members", () => {
  it("lets an owner add members who sign in with the password they were given, and lists everyone with their role", async () => {
    const { owner, admin, member } = await team()
    const listed = await api.get(MEMBERS, { token: member.token })
    expect(listed.status).toBe(200)
    expect(listed.body.map((entry: any) => [entry.user_id, entry.role])).toEqual([
      [owner.userId, "owner"],
      [admin.userId, "admin"],
      [member.userId, "member"]
    ])
    expect(listed.body[1]).toMatchObject({ email: admin.email, name: "admin", joined_at: expect.any(String) })
    expect(JSON.stringify(listed.body)).not.toContain(admin.password)
    const me = await api.get("/api/v1/auth/me", { token: member.token })
    expect(me.body.organization_id).toBe(owner.organizationId)
  })

  it("checks a new member's email and password with the signup rule and refuses an email in use", async () => {
    const owner = await newAccount(api, "strict")
    const bad = await api.post(MEMBERS, { email: "not-an-email", password: "x" }, { token: owner.token })
    expect(bad.status).toBe(422)
    expect(bad.body.detail.map((problem: any) => problem.loc)).toEqual([["body", "email"], ["body", "password"]])
    const common = await api.post(MEMBERS, { email: uniqueEmail(), password: "password123" }, { token: owner.token })
    expect(common.status).toBe(422)
    expect(common.body.detail[0].msg).toMatch(/commonly used/)
    const taken = await api.post(MEMBERS, { email: owner.email.toUpperCase(), password: "fresh-password-1" }, {
      token: owner.token
    })
    expect(taken.status).toBe(409)
    const role = await api.post(MEMBERS, { email: uniqueEmail(), password: "fresh-password-1", role: "root" }, {
      token: owner.token
    })
    expect(role.status).toBe(422)
    expect(role.body.detail[0].loc).toEqual(["body", "role"])
  })

  it("needs a session token: API keys do not manage members", async () => {
    const owner = await newAccount(api, "keyed")
    const key = await newApiKey(api, owner)
    const reply = await api.post(MEMBERS, { email: uniqueEmail(), password: "fresh-password-1" }, { apiKey: key })
    expect(reply.status).toBe(403)
    expect(reply.body.detail).toMatch(/session token/)
  })
})

describe("what a member may not do", () => {
  it("cannot change model or telephony settings, but reads them", async () => {
    const { owner, member } = await team()
    const config = (await api.post(TELEPHONY, { name: "Main", config: TWILIO }, { token: owner.token })).body
    expect((await api.put(MODEL, LLM, { token: owner.token })).status).toBe(200)

    const attempts = [
      await api.put(MODEL, { llm: { provider: "openai", model: "other", base_url: "http://attacker.example/v1" } }, {
        token: member.token
      }),
      await api.post(TELEPHONY, { name: "Mine", config: TWILIO }, { token: member.token }),
      await api.put(`${TELEPHONY}/${config.id}`, { config: { api_base_url: "http://attacker.example" } }, {
        token: member.token
      }),
      await api.post(`${TELEPHONY}/${config.id}/phone-numbers`, { address: "+14155550100" }, { token: member.token }),
      await api.delete(`${TELEPHONY}/${config.id}`, { token: member.token })
    ]
    expect(attempts.map((attempt) => attempt.status)).toEqual([403, 403, 403, 403, 403])
    expect(attempts[0]!.body.detail).toBe("This needs the admin or owner role; you are a member")

    expect((await api.get(MODEL, { token: member.token })).body.llm.model).toBe("gpt-4o-mini")
    const read = await api.get(`${TELEPHONY}/${config.id}`, { token: member.token })
    expect(read.status).toBe(200)
    expect(read.body.config).toEqual(config.config)
    expect(read.body.config.auth_token).toBe("****1234")
  })

  it("cannot add members, change roles or remove anyone but themselves", async () => {
    const { owner, admin, member } = await team()
    expect(
      (await api.post(MEMBERS, { email: uniqueEmail(), password: "fresh-password-1" }, { token: member.token })).status
    ).toBe(403)
    expect((await api.put(`${MEMBERS}/${member.userId}`, { role: "admin" }, { token: member.token })).status).toBe(403)
    expect((await api.put(`${MEMBERS}/${owner.userId}`, { role: "member" }, { token: member.token })).status).toBe(403)
    expect((await api.delete(`${MEMBERS}/${admin.userId}`, { token: member.token })).status).toBe(403)
    const roles = (await api.get(MEMBERS, { token: owner.token })).body.map((entry: any) => entry.role)
    expect(roles).toEqual(["owner", "admin", "member"])
  })

  it("sees and manages only their own API keys: the owner's cannot be revoked nor reactivated", async () => {
    const { owner, member } = await team()
    const ownerKeyId = await keyIdOf(owner)
    const memberKeyId = await keyIdOf(member)

    const listed = await api.get(KEYS, { token: member.token })
    expect(listed.body.map((key: any) => key.id)).toEqual([memberKeyId])
    expect(listed.body[0].created_by).toBe(member.userId)

    const revoke = await api.delete(`${KEYS}/${ownerKeyId}`, { token: member.token })
    expect(revoke.status).toBe(403)
    expect(revoke.body.detail).toMatch(/another member's API keys/)
    expect((await api.delete(`${KEYS}/${ownerKeyId}`, { token: owner.token })).status).toBe(200)
    expect((await api.put(`${KEYS}/${ownerKeyId}/reactivate`, undefined, { token: member.token })).status).toBe(403)
    expect(
      (await api.get(`${KEYS}?include_archived=true`, { token: owner.token })).body.find((key: any) =>
        key.id === ownerKeyId
      ).is_active
    ).toBe(false)

    expect((await api.delete(`${KEYS}/${memberKeyId}`, { token: member.token })).status).toBe(200)
    expect((await api.put(`${KEYS}/${memberKeyId}/reactivate`, undefined, { token: member.token })).status).toBe(200)
  })

  it("cannot reactivate their own key after an admin revoked it", async () => {
    const { admin, member } = await team()
    const memberKeyId = await keyIdOf(member)
    expect((await api.delete(`${KEYS}/${memberKeyId}`, { token: admin.token })).status).toBe(200)
    const undo = await api.put(`${KEYS}/${memberKeyId}/reactivate`, undefined, { token: member.token })
    expect(undo.status).toBe(403)
    expect(undo.body.detail).toMatch(/revoked by someone else/)
    expect((await api.put(`${KEYS}/${memberKeyId}/reactivate`, undefined, { token: admin.token })).status).toBe(200)
  })
})

describe("what an admin may do", () => {
  it("changes settings, manages members' and admins' keys, adds members and admins", async () => {
    const { admin, member } = await team()
    expect((await api.put(MODEL, LLM, { token: admin.token })).status).toBe(200)
    const created = await api.post(TELEPHONY, { name: "Admin's", config: TWILIO }, { token: admin.token })
    expect(created.status).toBe(200)
    expect((await api.delete(`${TELEPHONY}/${created.body.id}`, { token: admin.token })).status).toBe(200)

    const memberKeyId = await keyIdOf(member)
    expect((await api.get(KEYS, { token: admin.token })).body.map((key: any) => key.id)).toContain(memberKeyId)
    expect((await api.delete(`${KEYS}/${memberKeyId}`, { token: admin.token })).status).toBe(200)

    const another = await addMember(admin, "admin", "second-admin")
    expect((await api.put(`${MEMBERS}/${another.userId}`, { role: "member" }, { token: admin.token })).body.role).toBe(
      "member"
    )
    expect((await api.delete(`${MEMBERS}/${another.userId}`, { token: admin.token })).status).toBe(200)
  })

  it("cannot make owners, nor change, remove or touch the keys of an owner", async () => {
    const { owner, admin, member } = await team()
    const ownerKeyId = await keyIdOf(owner)
    const refusals = [
      await api.post(MEMBERS, { email: uniqueEmail(), password: "fresh-password-1", role: "owner" }, {
        token: admin.token
      }),
      await api.put(`${MEMBERS}/${member.userId}`, { role: "owner" }, { token: admin.token }),
      await api.put(`${MEMBERS}/${owner.userId}`, { role: "admin" }, { token: admin.token }),
      await api.delete(`${MEMBERS}/${owner.userId}`, { token: admin.token }),
      await api.delete(`${KEYS}/${ownerKeyId}`, { token: admin.token })
    ]
    expect(refusals.map((refusal) => refusal.status)).toEqual([403, 403, 403, 403, 403])
    expect(refusals[0]!.body.detail).toBe("Only an owner can make someone an owner")
  })

  it("cannot reactivate a key an owner revoked", async () => {
    const { owner, admin, member } = await team()
    const memberKeyId = await keyIdOf(member)
    expect((await api.delete(`${KEYS}/${memberKeyId}`, { token: owner.token })).status).toBe(200)
    const undo = await api.put(`${KEYS}/${memberKeyId}/reactivate`, undefined, { token: admin.token })
    expect(undo.status).toBe(403)
    expect(undo.body.detail).toMatch(/revoked by an owner/)
  })
})

describe("owners", () => {
  it("can make another owner and then step down; the last owner can be neither demoted nor removed", async () => {
    const { owner, admin } = await team()
    const demote = await api.put(`${MEMBERS}/${owner.userId}`, { role: "admin" }, { token: owner.token })
    expect(demote.status).toBe(409)
    expect(demote.body.detail).toMatch(/last owner/)
    expect((await api.delete(`${MEMBERS}/${owner.userId}`, { token: owner.token })).status).toBe(409)

    expect((await api.put(`${MEMBERS}/${admin.userId}`, { role: "owner" }, { token: owner.token })).body.role).toBe(
      "owner"
    )
    expect((await api.put(`${MEMBERS}/${owner.userId}`, { role: "member" }, { token: owner.token })).status).toBe(200)
    // Their session now acts as a member.
    expect((await api.put(MODEL, LLM, { token: owner.token })).status).toBe(403)
    expect((await api.delete(`${MEMBERS}/${admin.userId}`, { token: admin.token })).status).toBe(409)
  })

  it("cannot leave the organization without an owner when two owners demote each other at once", async () => {
    const owner = await newAccount(api, "first-owner")
    const second = await addMember(owner, "owner", "second-owner")
    const replies = await Promise.all([
      api.put(`${MEMBERS}/${second.userId}`, { role: "member" }, { token: owner.token }),
      api.put(`${MEMBERS}/${owner.userId}`, { role: "member" }, { token: second.token })
    ])
    // The later of the two is decided against roles as the earlier left them: its caller is no longer an owner.
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 403])
    const roles = (await api.get(MEMBERS, { token: owner.token })).body.map((entry: any) => entry.role)
    expect(roles.filter((role: string) => role === "owner")).toHaveLength(1)
  })
})

describe("API keys act with their creator's current role, within their scopes", () => {
  it("lose admin rights the moment their creator is demoted", async () => {
    const { owner, admin } = await team()
    const key = await newApiKey(api, admin)
    expect((await api.put(MODEL, LLM, { apiKey: key })).status).toBe(200)
    expect((await api.put(`${MEMBERS}/${admin.userId}`, { role: "member" }, { token: owner.token })).status).toBe(200)
    const after = await api.put(MODEL, LLM, { apiKey: key })
    expect(after.status).toBe(403)
    expect(after.body.detail).toMatch(/you are a member/)
  })

  it("need both the role and the scope", async () => {
    const { admin, member } = await team()
    const narrowAdmin = await newApiKey(api, admin, ["agents:read"])
    const fullMember = await newApiKey(api, member)
    expect((await api.put(MODEL, LLM, { apiKey: narrowAdmin })).body.detail).toMatch(/lacks the "agents:write" scope/)
    expect((await api.put(MODEL, LLM, { apiKey: fullMember })).body.detail).toMatch(/you are a member/)
  })
})

describe("removing a member", () => {
  it("ends their sessions and keys at once, and their email can be added again", async () => {
    const { owner, member } = await team()
    const key = await newApiKey(api, member)
    expect((await api.get("/api/v2/status", { apiKey: key })).status).toBe(200)
    expect((await api.delete(`${MEMBERS}/${member.userId}`, { token: owner.token })).status).toBe(200)

    expect((await api.get("/api/v1/auth/me", { token: member.token })).status).toBe(401)
    expect((await api.get("/api/v2/status", { apiKey: key })).status).toBe(401)
    expect((await api.post("/api/v1/auth/login", { email: member.email, password: member.password })).status).toBe(401)
    expect((await api.get(MEMBERS, { token: owner.token })).body.map((entry: any) => entry.user_id)).not.toContain(
      member.userId
    )

    const again = await api.post(MEMBERS, { email: member.email, password: "second-chance-1" }, { token: owner.token })
    expect(again.status).toBe(200)
    expect((await api.post("/api/v1/auth/login", { email: member.email, password: "second-chance-1" })).status).toBe(
      200
    )
  })

  it("lets a member leave on their own", async () => {
    const { owner, member } = await team()
    expect((await api.delete(`${MEMBERS}/${member.userId}`, { token: member.token })).status).toBe(200)
    expect((await api.get("/api/v1/auth/me", { token: member.token })).status).toBe(401)
    expect((await api.get(MEMBERS, { token: owner.token })).body).toHaveLength(2)
  })
})

describe("tenancy", () => {
  it("keeps one organization's members invisible and untouchable to another", async () => {
    const mine = await team()
    const theirs = await newAccount(api, "elsewhere")
    const listed = await api.get(MEMBERS, { token: theirs.token })
    expect(listed.body.map((entry: any) => entry.user_id)).toEqual([theirs.userId])

    for (const target of [mine.owner.userId, mine.admin.userId, mine.member.userId]) {
      expect((await api.put(`${MEMBERS}/${target}`, { role: "member" }, { token: theirs.token })).status).toBe(404)
      expect((await api.delete(`${MEMBERS}/${target}`, { token: theirs.token })).status).toBe(404)
    }
    const memberKeyId = await keyIdOf(mine.member)
    expect((await api.delete(`${KEYS}/${memberKeyId}`, { token: theirs.token })).status).toBe(404)

    const roles = (await api.get(MEMBERS, { token: mine.owner.token })).body.map((entry: any) => entry.role)
    expect(roles).toEqual(["owner", "admin", "member"])
    expect((await api.get("/api/v1/auth/me", { token: mine.member.token })).status).toBe(200)
  })
})
