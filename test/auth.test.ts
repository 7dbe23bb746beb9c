import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type RunningServer, startServer, TEST_ADMIN, uniqueEmail } from "./support/server.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

describe("login", () => {
  it("signs in the bootstrapped admin and identifies the caller with the token", async () => {
    const login = await api.post("/api/v1/auth/login", TEST_ADMIN)
    expect(login.status).toBe(200)
    expect(login.body.token).toMatch(/^tgs_/)
    expect(login.body.user.email).toBe(TEST_ADMIN.email)
    expect(new Date(login.body.expires_at).getTime()).toBeGreaterThan(Date.now() + 23 * 3600_000)

    const me = await api.get("/api/v1/auth/me", { token: login.body.token })
    expect(me.status).toBe(200)
    expect(me.body).toEqual({ ...login.body.user, organization_name: expect.any(String), role: "owner" })
  })

  it("names the caller's organization and their role in it", async () => {
    const owner = await newAccount(api, "lovelace")
    const email = uniqueEmail("ada")
    const added = await api.post("/api/v1/organizations/members", {
      email,
      password: "a first password for Ada",
      name: "Ada",
      role: "member"
    }, { token: owner.token })
    expect(added.status).toBe(200)
    const login = await api.post("/api/v1/auth/login", { email, password: "a first password for Ada" })

    const asOwner = await api.get("/api/v1/auth/me", { token: owner.token })
    const asMember = await api.get("/api/v1/auth/me", { token: login.body.token })
    expect(asOwner.body).toMatchObject({ organization_name: "lovelace", role: "owner" })
    expect(asMember.body).toMatchObject({
      name: "Ada",
      organization_id: owner.organizationId,
      organization_name: "lovelace",
      role: "member"
    })
  })

  it("accepts the email in any letter case", async () => {
    const login = await api.post("/api/v1/auth/login", { ...TEST_ADMIN, email: TEST_ADMIN.email.toUpperCase() })
    expect(login.status).toBe(200)
  })

  it("refuses a wrong password and an unknown email with the same 401", async () => {
    const account = await newAccount(api)
    const wrong = await api.post("/api/v1/auth/login", { email: account.email, password: "not the password" })
    const unknown = await api.post("/api/v1/auth/login", { email: uniqueEmail("ghost"), password: "whatever-pass" })
    expect(wrong.status).toBe(401)
    expect(unknown.status).toBe(401)
    expect(wrong.body).toEqual({ detail: "Incorrect email or password" })
    expect(unknown.body).toEqual(wrong.body)
  })

  it("throttles an account after five failures with 429 and Retry-After, even for the right password", async () => {
    const account = await newAccount(api)
    for (let i = 0; i < 5; i++) {
      const reply = await api.post("/api/v1/auth/login", { email: account.email, password: `wrong-${i}` })
      expect(reply.status).toBe(401)
    }
    const throttled = await api.post("/api/v1/auth/login", { email: account.email, password: account.password })
    expect(throttled.status).toBe(429)
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0)
    expect(throttled.body.detail).toMatch(/Too many failed logins/)

    const other = await newAccount(api)
    expect((await api.post("/api/v1/auth/login", { email: other.email, password: other.password })).status).toBe(200)
  })

  it("validates the login body in FastAPI's 422 shape", async () => {
    const reply = await api.post("/api/v1/auth/login", { email: 42 })
    expect(reply.status).toBe(422)
    expect(reply.body).toEqual({
      detail: [
        { loc: ["body", "email"], msg: expect.any(String), type: "string_type" },
        { loc: ["body", "password"], msg: "Field required", type: "missing" }
      ]
    })
  })
})

describe("sessions", () => {
  it("stops accepting a token once logged out", async () => {
    const account = await newAccount(api)
    expect((await api.get("/api/v1/auth/me", { token: account.token })).status).toBe(200)
    expect((await api.post("/api/v1/auth/logout", undefined, { token: account.token })).status).toBe(200)
    const after = await api.get("/api/v1/auth/me", { token: account.token })
    expect(after.status).toBe(401)
    expect(after.body.detail).toMatch(/signed out|expired/)
  })

  it("refuses logout with an API key, saying logout is for session tokens, and leaves the key working", async () => {
    const account = await newAccount(api)
    const key = await newApiKey(api, account)
    const reply = await api.post("/api/v1/auth/logout", undefined, { apiKey: key })
    expect(reply.status).toBe(403)
    expect(reply.body.detail).toMatch(/session token/)
    expect(reply.body.detail).toContain("DELETE /api/v1/user/api-keys/{id}")
    expect((await api.get("/api/v1/auth/me", { apiKey: key })).status).toBe(200)
    expect((await api.get("/api/v1/auth/me", { token: account.token })).status).toBe(200)
  })

  it("stops accepting a token after it expires", async () => {
    const account = await newAccount(api)
    await server.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) => sql`UPDATE sessions SET expires_at = now() - interval '1 second' WHERE user_id = ${account.userId}`
      )
    )
    expect((await api.get("/api/v1/auth/me", { token: account.token })).status).toBe(401)
  })

  it("keeps other sessions of the same user alive after one logs out", async () => {
    const account = await newAccount(api)
    const second = await api.post("/api/v1/auth/login", { email: account.email, password: account.password })
    await api.post("/api/v1/auth/logout", undefined, { token: account.token })
    expect((await api.get("/api/v1/auth/me", { token: second.body.token })).status).toBe(200)
  })

  it("refuses requests without credentials or with a forged token", async () => {
    const none = await api.get("/api/v1/auth/me")
    expect(none.status).toBe(401)
    expect(none.body.detail).toMatch(/Not authenticated/)
    expect((await api.get("/api/v1/auth/me", { token: "tgs_forged" })).status).toBe(401)
    expect((await api.get("/api/v1/auth/me", { token: "random" })).status).toBe(401)
  })
})

describe("signup", () => {
  it("creates a user in a new organization and refuses a duplicate email with 409", async () => {
    const email = uniqueEmail("signup")
    const first = await api.post("/api/v1/auth/signup", { email, password: "long-enough-pw", name: "Ada" })
    expect(first.status).toBe(200)
    expect(first.body.user).toMatchObject({ email, name: "Ada" })
    const again = await api.post("/api/v1/auth/signup", { email: email.toUpperCase(), password: "long-enough-pw" })
    expect(again.status).toBe(409)
    expect(again.body.detail).toMatch(/already exists/)
  })

  it("answers 409, not 500, to the later of two signups for one email sent at once", async () => {
    const email = uniqueEmail("race")
    const replies = await Promise.all(
      Array.from({ length: 4 }, () => api.post("/api/v1/auth/signup", { email, password: "long-enough-pw" }))
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409, 409, 409])
  })

  it("checks email and password length", async () => {
    const reply = await api.post("/api/v1/auth/signup", { email: "not-an-email", password: "short" })
    expect(reply.status).toBe(422)
    expect(reply.body.detail.map((problem: any) => problem.loc)).toEqual([["body", "email"], ["body", "password"]])
  })
})

describe("closed signup", () => {
  it("answers 403 when TALKGRAPH_SIGNUP is off", async () => {
    const closed = await startServer({ TALKGRAPH_SIGNUP: "false" })
    try {
      const reply = await client(closed.url).post("/api/v1/auth/signup", {
        email: uniqueEmail(),
        password: "long-enough-pw"
      })
      expect(reply.status).toBe(403)
      expect(reply.body.detail).toMatch(/Signup is closed/)
    } finally {
      await closed.close()
    }
  })
})

describe("concurrency", () => {
  it("answers many simultaneous requests that write and read, all correctly", async () => {
    const accounts = await Promise.all(Array.from({ length: 12 }, (_, i) => newAccount(api, `parallel${i}`)))
    const replies = await Promise.all(
      accounts.flatMap((account) => [
        api.get("/api/v1/auth/me", { token: account.token }),
        api.post("/api/v1/user/api-keys", { name: "parallel" }, { token: account.token }),
        api.post("/api/v1/auth/login", { email: account.email, password: account.password })
      ])
    )
    expect(replies.map((reply) => reply.status)).toEqual(replies.map(() => 200))
    replies.filter((_, i) => i % 3 === 0).forEach((me, i) => expect(me.body.id).toBe(accounts[i]!.userId))
  })
})
