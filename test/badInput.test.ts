import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount } from "./support/accounts.ts"
import { client, type Client } from "./support/client.ts"
import { type RunningServer, startServer, uniqueEmail } from "./support/server.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

describe("no 5xx from bad input", () => {
  it("answers simultaneous signups with one email with one 200 and 409 for the others", async () => {
    const email = uniqueEmail("race")
    const replies = await Promise.all(
      Array.from({ length: 8 }, (_, index) => api.post("/api/v1/auth/signup", { email, password: "race-password-1", name: `Racer ${index}` }))
    )
    const statuses = replies.map((reply) => reply.status).sort()
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409])
    expect((await api.post("/api/v1/auth/login", { email, password: "race-password-1" })).status).toBe(200)
  })

  it("refuses dates the database cannot store with 422 at decode, and takes the last storable day as an open end", async () => {
    const { token } = await newAccount(api)
    for (const date of ["0000-01-01", "0001-01-01T00:00:00%2B14:00", "9999-12-31T23:00:00-14:00"]) {
      const reply = await api.get(`/api/v1/organizations/usage/runs?start_date=${date}`, { token })
      expect(reply.status).toBe(422)
      expect(reply.body.detail).toEqual([
        { loc: ["query", "start_date"], msg: "must be between 0001-01-01 and 9999-12-31 (UTC)", type: "value_error" }
      ])
    }
    const everything = await api.get("/api/v1/organizations/usage/runs?start_date=0001-01-01&end_date=9999-12-31", { token })
    expect(everything.status).toBe(200)
    expect(everything.body.total_count).toBe(0)
    const days = await api.get("/api/v1/organizations/usage/daily-breakdown?end_date=9999-12-31", { token })
    expect(days.status).toBe(200)
  })
})
