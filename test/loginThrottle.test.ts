import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount } from "./support/accounts.ts"
import { client, type Client } from "./support/client.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

const statusCounts = (statuses: ReadonlyArray<number>) =>
  statuses.reduce<Record<number, number>>((counts, status) => ({ ...counts, [status]: (counts[status] ?? 0) + 1 }), {})

describe("login throttle under concurrency", () => {
  it("checks at most five passwords of one account when a burst of wrong guesses arrives at once, then refuses the right one", async () => {
    const account = await newAccount(api, "burst")
    const guesses = await Promise.all(
      Array.from({ length: 120 }, (_, i) => api.post("/api/v1/auth/login", { email: account.email, password: `guess-${i}` }))
    )
    const counts = statusCounts(guesses.map((reply) => reply.status))
    // A 401 is a password that was checked and found wrong; a 429 was refused before any check.
    expect(counts[401]).toBe(5)
    expect(counts[429]).toBe(115)

    const right = await api.post("/api/v1/auth/login", { email: account.email, password: account.password })
    expect(right.status).toBe(429)
    expect(Number(right.headers.get("retry-after"))).toBeGreaterThan(0)
  })

  it("keeps the lock when more wrong guesses arrive while it holds, whether or not they overlap", async () => {
    const account = await newAccount(api, "overlap")
    const first = Promise.all(
      Array.from({ length: 30 }, (_, i) => api.post("/api/v1/auth/login", { email: account.email, password: `first-${i}` }))
    )
    const second = Promise.all(
      Array.from({ length: 30 }, (_, i) => api.post("/api/v1/auth/login", { email: account.email, password: `second-${i}` }))
    )
    const statuses = [...await first, ...await second].map((reply) => reply.status)
    expect(statusCounts(statuses)[401]).toBe(5)
    for (let i = 0; i < 3; i++) {
      expect((await api.post("/api/v1/auth/login", { email: account.email, password: `late-${i}` })).status).toBe(429)
    }
    expect((await api.post("/api/v1/auth/login", { email: account.email, password: account.password })).status).toBe(429)
  })

  it("lets the right password in while wrong guesses for the same account are being checked", async () => {
    const account = await newAccount(api, "mixed")
    const replies = await Promise.all([
      api.post("/api/v1/auth/login", { email: account.email, password: "wrong-1" }),
      api.post("/api/v1/auth/login", { email: account.email, password: account.password }),
      api.post("/api/v1/auth/login", { email: account.email, password: "wrong-2" })
    ])
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 401, 401])
  })

  it("starts the count again after a successful login", async () => {
    const account = await newAccount(api, "reset")
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 4; i++) {
        expect((await api.post("/api/v1/auth/login", { email: account.email, password: `wrong-${round}-${i}` })).status).toBe(401)
      }
      expect((await api.post("/api/v1/auth/login", { email: account.email, password: account.password })).status).toBe(200)
    }
  })
})
