import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony, contactsCsv, eventually, numbersFrom, startedCampaign } from "./support/dialerFixtures.ts"
import { type CallScript, type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { type RunningServer, startServer } from "./support/server.ts"

/** The longest poll the settings allow: any dial within a few seconds came from the doorbell. */
const POLL_MS = 60_000
/** Far below the poll, far above a claim and a carrier request on a busy machine. */
const PROMPTLY_MS = 10_000

let server: RunningServer
let api: Client
let carrier: FakeTwilio
const scripts = new Map<string, CallScript>()

beforeAll(async () => {
  carrier = await startFakeTwilio({ script: ({ to }) => scripts.get(to) ?? { outcome: "completed" } })
  server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: String(POLL_MS) }, { ownDatabase: true })
  api = client(server.url)
})
afterAll(async () => {
  await server?.close()
  await carrier?.close()
})

const callsTo = (numbers: ReadonlyArray<string>) => carrier.calls().filter((call) => numbers.includes(call.to))

describe("the dialer's doorbell", () => {
  it("dials a started campaign at once, without waiting for the scheduler's poll", async () => {
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const numbers = numbersFrom("+1415620", 2)
    const startedAt = Date.now()
    await startedCampaign(server, api, account, contactsCsv(numbers))
    await eventually(async () => callsTo(numbers).length === 2, PROMPTLY_MS, "both contacts called")
    expect(Date.now() - startedAt).toBeLessThan(POLL_MS)
  })

  it("dials a resumed campaign at once, without waiting for the scheduler's poll", async () => {
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const numbers = numbersFrom("+1415621", 2)
    // One call at a time: the first talks long enough for the campaign to be paused before the second.
    scripts.set(numbers[0]!, { outcome: "completed", talkMs: 1_500 })
    const id = await startedCampaign(server, api, account, contactsCsv(numbers), { max_concurrency: 1 })
    await eventually(async () => callsTo(numbers).length === 1, PROMPTLY_MS, "the first contact called")
    const paused = await api.post(`/api/v1/campaign/${id}/pause`, undefined, { token: account.token })
    expect(paused.status).toBe(200)
    await eventually(
      async () => (await api.get(`/api/v1/campaign/${id}/progress`, { token: account.token })).body.live_calls === 0,
      PROMPTLY_MS,
      "the first call over"
    )
    expect(callsTo(numbers)).toHaveLength(1)
    const resumed = await api.post(`/api/v1/campaign/${id}/resume`, undefined, { token: account.token })
    expect(resumed.status).toBe(200)
    const resumedAt = Date.now()
    await eventually(async () => callsTo(numbers).length === 2, PROMPTLY_MS, "the second contact called")
    expect(Date.now() - resumedAt).toBeLessThan(POLL_MS)
  })
})
