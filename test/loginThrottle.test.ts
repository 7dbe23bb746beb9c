import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { admitLoginAttempt, clearLoginAttempts } from "../layers/identity/loginAttempts.ts"
import { defaultThrottlePolicy } from "../src/identity/loginThrottle.ts"
import { newAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { postgresUrl } from "./support/database.ts"
import { type RunningServer, startServer, uniqueEmail } from "./support/server.ts"

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
      Array.from(
        { length: 120 },
        (_, i) => api.post("/api/v1/auth/login", { email: account.email, password: `guess-${i}` })
      )
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
      Array.from(
        { length: 30 },
        (_, i) => api.post("/api/v1/auth/login", { email: account.email, password: `first-${i}` })
      )
    )
    const second = Promise.all(
      Array.from(
        { length: 30 },
        (_, i) => api.post("/api/v1/auth/login", { email: account.email, password: `second-${i}` })
      )
    )
    const statuses = [...await first, ...await second].map((reply) => reply.status)
    expect(statusCounts(statuses)[401]).toBe(5)
    for (let i = 0; i < 3; i++) {
      expect((await api.post("/api/v1/auth/login", { email: account.email, password: `late-${i}` })).status).toBe(429)
    }
    expect((await api.post("/api/v1/auth/login", { email: account.email, password: account.password })).status).toBe(
      429
    )
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
        expect((await api.post("/api/v1/auth/login", { email: account.email, password: `wrong-${round}-${i}` })).status)
          .toBe(401)
      }
      expect((await api.post("/api/v1/auth/login", { email: account.email, password: account.password })).status).toBe(
        200
      )
    }
  })
})

describe("login throttle across processes", () => {
  it.runIf(postgresUrl())("holds when a burst is spread over two servers sharing the database", async () => {
    const second = await startServer()
    try {
      const other = client(second.url)
      const account = await newAccount(api, "spread")
      const guesses = await Promise.all(
        Array.from(
          { length: 80 },
          (_, i) =>
            (i % 2 === 0 ? api : other).post("/api/v1/auth/login", { email: account.email, password: `guess-${i}` })
        )
      )
      expect(statusCounts(guesses.map((reply) => reply.status))[401]).toBe(5)
      expect((await other.post("/api/v1/auth/login", { email: account.email, password: account.password })).status)
        .toBe(429)
    } finally {
      await second.close()
    }
  })
})

describe("login attempt rule, at given times", () => {
  const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1) + seconds * 1000)
  const account = () => {
    const key = uniqueEmail("rule")
    return {
      attempt: (seconds: number) =>
        server.run(
          Effect.flatMap(SqlClient.SqlClient, (sql) => admitLoginAttempt(sql, key, at(seconds), defaultThrottlePolicy))
        ),
      succeed: () => server.run(Effect.flatMap(SqlClient.SqlClient, (sql) => clearLoginAttempts(sql, key)))
    }
  }

  it("admits five attempts inside the window; the fifth locks for five minutes", async () => {
    const { attempt } = account()
    for (let i = 0; i < 5; i++) expect(await attempt(i * 10)).toEqual({ admitted: true })
    expect(await attempt(60)).toEqual({ admitted: false, retryAfterSeconds: 280 })
    expect(await attempt(339)).toEqual({ admitted: false, retryAfterSeconds: 1 })
    expect(await attempt(340)).toEqual({ admitted: true })
  })

  it("counts attempts made in the same instant, none of them finished, against the same five", async () => {
    const { attempt } = account()
    const decisions = await Promise.all(Array.from({ length: 12 }, () => attempt(0)))
    expect(decisions.filter((decision) => decision.admitted)).toHaveLength(5)
  })

  it("neither extends nor lifts a lock when attempts arrive during it", async () => {
    const { attempt } = account()
    for (let i = 0; i < 5; i++) await attempt(i)
    for (let seconds = 10; seconds < 300; seconds += 10) expect((await attempt(seconds)).admitted).toBe(false)
    expect(await attempt(303)).toEqual({ admitted: false, retryAfterSeconds: 1 })
    expect(await attempt(304)).toEqual({ admitted: true })
    // Counting starts again after the lock: four more are admitted before the next lock.
    for (let i = 0; i < 3; i++) expect(await attempt(305 + i)).toEqual({ admitted: true })
    expect(await attempt(310)).toEqual({ admitted: true })
    expect((await attempt(311)).admitted).toBe(false)
  })

  it("forgets attempts older than the window, and all of them after a success", async () => {
    const { attempt, succeed } = account()
    for (let i = 0; i < 4; i++) await attempt(i)
    for (let i = 0; i < 4; i++) expect(await attempt(900 + i)).toEqual({ admitted: true })
    await succeed()
    for (let i = 0; i < 4; i++) expect(await attempt(910 + i)).toEqual({ admitted: true })
    expect(await attempt(920)).toEqual({ admitted: true })
    expect((await attempt(921)).admitted).toBe(false)
  })
})
