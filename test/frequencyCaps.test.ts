import { describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { carrierTelephony, contactsCsv, eventually, startedCampaign } from "./support/dialerFixtures.ts"
import { dialingServerForTests } from "./support/dialingServer.ts"
import { ensureVoiceModels } from "./support/voiceFixtures.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

const dialing = dialingServerForTests(200)
const { query, calledNumbers } = dialing
const callsTo = (number: string) => calledNumbers().filter((called) => called === number).length
const offHours = { enabled: false, start: "09:00", end: "20:00", days: [1, 2, 3, 4, 5, 6, 7], holidays: [] }

describe("frequency caps across campaigns and single calls", () => {
  it("never call a number more often than the organization allows, whichever campaign or single call it comes from", async () => {
    const account = await newAccount(dialing.api)
    const auth = { token: account.token }
    await carrierTelephony(dialing.api, auth, dialing.carrier)
    const put = await dialing.api.put("/api/v1/organizations/compliance-policy", {
      calling_hours: offHours,
      frequency_caps: { per_day: 1, per_7_days: 3 }
    }, auth)
    expect(put.status).toBe(200)
    expect((await dialing.api.get("/api/v1/organizations/compliance-policy", auth)).body.frequency_caps).toEqual({
      per_day: 1,
      per_7_days: 3
    })
    const shared = "+14156500001"
    const single = "+14156500002"
    const fresh = "+14156500003"

    // A single call first: its number counts towards the cap too.
    await ensureVoiceModels(dialing.api, auth)
    const workflowId = await insertWorkflow(dialing.server, account.organizationId, { variables: [] })
    const key = await newApiKey(dialing.api, account, ["calls:write", "calls:read"])
    expect(
      (await dialing.api.post("/api/v2/calls", { agent_id: workflowId, phone_number: single }, { apiKey: key })).status
    )
      .toBe(201)

    const first = await startedCampaign(dialing.server, dialing.api, account, contactsCsv([shared]), {})
    await eventually(
      async () => (await dialing.api.get(`/api/v1/campaign/${first}/progress`, auth)).body.state === "completed",
      20_000,
      "first campaign completed"
    )
    expect(callsTo(shared)).toBe(1)

    // A second campaign with the same numbers: only the fresh one is called; the others wait for the cap.
    const second = await startedCampaign(dialing.server, dialing.api, account, contactsCsv([shared, single, fresh]), {})
    const progress = await eventually(
      async () => {
        const body = (await dialing.api.get(`/api/v1/campaign/${second}/progress`, auth)).body
        return body.completed === 1 && body.waiting_for_frequency_cap === 2 ? body : undefined
      },
      20_000,
      "capped contacts waiting"
    )
    expect(progress).toMatchObject({ state: "running", pending: 2, failed: 0 })
    expect(callsTo(fresh)).toBe(1)
    expect(callsTo(shared)).toBe(1)
    expect(callsTo(single)).toBe(1)
    const waiting = await query<{ phone_number: string; next_attempt_at: Date; skip_reason: string }>((sql) =>
      sql`SELECT phone_number, next_attempt_at, skip_reason FROM campaign_contacts
          WHERE campaign_id = ${second} AND state = 'pending' ORDER BY phone_number`
    )
    const [firstRun] = await query<{ created_at: Date }>((sql) =>
      sql`SELECT created_at FROM runs WHERE campaign_id = ${first} AND called_number = ${shared}`
    )
    expect(waiting.map((row) => [row.phone_number, row.skip_reason])).toEqual([
      [shared, "frequency_cap"],
      [single, "frequency_cap"]
    ])
    // Due again 24 hours after the call that used the day's cap.
    expect(waiting[0]!.next_attempt_at.getTime()).toBe(firstRun!.created_at.getTime() + 86_400_000)

    // Due again while the cap still holds: looked at again, still not called.
    await query((sql) =>
      sql`UPDATE campaign_contacts SET next_attempt_at = now() WHERE campaign_id = ${second} AND state = 'pending'`
    )
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(callsTo(shared)).toBe(1)
    // A single call to a capped number is refused.
    const refused = await dialing.api.post("/api/v2/calls", { agent_id: workflowId, phone_number: shared }, {
      apiKey: key
    })
    expect(refused.status).toBe(409)
    expect(refused.body.error.message).toContain("frequency cap")

    // The day passes (the earlier calls are a day old): they are called, once each.
    await query((sql) =>
      sql`UPDATE runs SET created_at = created_at - interval '25 hours'
          WHERE organization_id = ${account.organizationId} AND called_number IN (${shared}, ${single})`
    )
    await query((sql) =>
      sql`UPDATE campaign_contacts SET next_attempt_at = now() WHERE campaign_id = ${second} AND state = 'pending'`
    )
    await eventually(
      async () => (await dialing.api.get(`/api/v1/campaign/${second}/progress`, auth)).body.state === "completed",
      20_000,
      "second campaign completed"
    )
    expect([callsTo(shared), callsTo(single), callsTo(fresh)]).toEqual([2, 2, 1])
  })
})
