import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount } from "./support/accounts.ts"
import type { CarrierStandIn } from "./support/carrierStandIns.ts"
import { client } from "./support/client.ts"
import { carrierTelephony, contactsCsv, eventually, numbersFrom, startedCampaign } from "./support/dialerFixtures.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { startFakeVonage } from "./support/fakeVonage.ts"
import { startLoadBalancer } from "./support/loadBalancer.ts"
import { TIMED_OUT } from "./support/loopbackCarrier.ts"
import { type RunningServer, startServer } from "./support/server.ts"

// Carriers send a callback again when its connection fails (Twilio's connection overrides: one
// retry by default), so a callback the product handled but whose answer was lost on the way back
// arrives twice. The campaign must count each call once.
let balancer: Awaited<ReturnType<typeof startLoadBalancer>>
let server: RunningServer
let carrier: FakeTwilio
let vonage: CarrierStandIn

beforeAll(async () => {
  carrier = await startFakeTwilio({ script: () => ({ outcome: "completed" }) })
  vonage = await startFakeVonage({ script: () => ({ outcome: "completed" }) })
  balancer = await startLoadBalancer()
  server = await startServer({ PUBLIC_URL: balancer.url, TALKGRAPH_SCHEDULER_POLL_MS: "200" }, { ownDatabase: true })
  balancer.add(server.url)
})
afterAll(async () => {
  await server?.close()
  await balancer?.close()
  await carrier?.close()
  await vonage?.close()
})

/** The campaign's progress once it has completed. */
const completedProgress = (api: ReturnType<typeof client>, token: string, id: number, withinMs: number) =>
  eventually(
    async () => {
      const body = (await api.get(`/api/v1/campaign/${id}/progress`, { token })).body
      return body.state === "completed" ? body : undefined
    },
    withinMs,
    "campaign completed"
  )

describe("a status callback the carrier sends twice", () => {
  it("counts each call once when the answers to its final callbacks were lost and the carrier retried them", async () => {
    const api = client(server.url)
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, carrier)
    const numbers = numbersFrom("+1415377", 3)
    const handled = balancer.loseFirstAnswers(
      (path, body) =>
        path.includes("/telephony/twilio/status/") && new URLSearchParams(body).get("CallStatus") === "completed"
    )
    const id = await startedCampaign(server, api, account, contactsCsv(numbers), { max_concurrency: 3 })

    const progress = await completedProgress(api, account.token, id, 30_000)

    // Each final callback reached the product twice: once unanswered, then again (the last
    // retry may still be on its way when the first delivery completed the campaign).
    await eventually(async () => handled() === 2 * numbers.length, 10_000, "every final callback handled twice")
    expect(carrier.callbackRetries()).toHaveLength(numbers.length)
    expect(carrier.callbackFailures()).toEqual([])
    expect(progress).toMatchObject({ total_rows: 3, processed_rows: 3, completed: 3, failed: 0, live_calls: 0 })
    const attempts = await server.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql<{ phone_number: string; attempts: number; ended: number; outcome: string | null }>`
        SELECT c.phone_number, count(a.id)::int AS attempts, count(a.ended_at)::int AS ended, min(a.outcome) AS outcome
        FROM campaign_contacts c LEFT JOIN campaign_attempts a ON a.contact_id = c.id
        WHERE c.campaign_id = ${id} GROUP BY c.phone_number ORDER BY c.phone_number`
      )
    )
    expect(attempts).toEqual(
      numbers.map((phone_number) => ({ phone_number, attempts: 1, ended: 1, outcome: "completed" }))
    )
    const runs = (await api.get(`/api/v1/campaign/${id}/runs`, { token: account.token })).body
    expect(runs.total_count).toBe(3)
  })
})

describe("an answer webhook the carrier gives up waiting for", () => {
  it("is asked again after Vonage's 5 s, and the call goes on once with the second answer", async () => {
    const api = client(server.url)
    const account = await newAccount(api)
    await carrierTelephony(api, { token: account.token }, vonage)
    const late = balancer.delayFirstAnswers((path) => path.includes("/telephony/vonage/answer/"), 6_000)
    const id = await startedCampaign(server, api, account, contactsCsv(["+14153780001"]), { max_concurrency: 1 })

    const progress = await completedProgress(api, account.token, id, 40_000)
    expect(late()).toBe(2)
    expect(vonage.callbackRetries()).toEqual([
      expect.stringMatching(new RegExp(`/answer/.*${TIMED_OUT} after 5000 ms`))
    ])
    expect(vonage.callbackFailures()).toEqual([])
    expect(progress).toMatchObject({ total_rows: 1, processed_rows: 1, completed: 1, failed: 0, live_calls: 0 })
    const runs = (await api.get(`/api/v1/campaign/${id}/runs`, { token: account.token })).body
    expect(runs.total_count).toBe(1)
  }, 60_000)
})
