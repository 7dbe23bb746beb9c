import { afterAll, beforeAll, describe, expect, it } from "vitest"
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
})
