import { describe, expect, it } from "vitest"
import { newAccount } from "./support/accounts.ts"
import { carrierTelephony, contactsCsv, eventually, startedCampaign } from "./support/dialerFixtures.ts"
import { dialingServerForTests } from "./support/dialingServer.ts"

const dialing = dialingServerForTests(100)
const { query } = dialing

/** An account whose default outbound configuration dials from `extra` numbers besides its default caller ID. */
const accountWithNumbers = async (extra: ReadonlyArray<string>) => {
  const account = await newAccount(dialing.api)
  const auth = { token: account.token }
  const telephony = await carrierTelephony(dialing.api, auth, dialing.carrier)
  const ids: Array<number> = []
  for (const address of extra) {
    const added = await dialing.api.post(
      `/api/v1/organizations/telephony-configs/${telephony.id}/phone-numbers`,
      { address },
      auth
    )
    expect(added.status).toBe(200)
    ids.push(added.body.id)
  }
  return { account, auth, telephony, ids }
}

/** The number each call to `to` was placed from, as the carrier saw it. */
const callsTo = (numbers: ReadonlyArray<string>) => dialing.carrier.calls().filter((call) => numbers.includes(call.to))

const completed = (campaignId: number, auth: { token: string }) =>
  eventually(
    async () => (await dialing.api.get(`/api/v1/campaign/${campaignId}/progress`, auth)).body.state === "completed",
    30_000,
    `campaign ${campaignId} completed`
  )

describe("caller-ID pools", () => {
  it("rotates the calls over the pool's numbers, and records each call's caller ID on its run", async () => {
    const { account, auth, ids } = await accountWithNumbers(["+12125550101", "+12125550102"])
    const recipients = Array.from({ length: 9 }, (_, i) => `+1312555${String(1000 + i)}`)
    const campaignId = await startedCampaign(dialing.server, dialing.api, account, contactsCsv(recipients), {
      rate_limit_per_second: 20,
      caller_id_pool: { strategy: "round_robin", phone_number_ids: ids }
    })
    await completed(campaignId, auth)
    const froms = callsTo(recipients).map((call) => call.from)
    expect(froms).toHaveLength(9)
    const perNumber = ["+12125550101", "+12125550102"].map((from) => froms.filter((used) => used === from).length)
    // In turn: the two numbers share the calls evenly; the configuration's default caller ID is not in the pool.
    expect(perNumber.sort()).toEqual([4, 5])
    const runs = await query<{ called_number: string; caller_number: string; initial_caller: string }>((sql) =>
      sql`SELECT called_number, caller_number, initial_context ->> 'caller_number' AS initial_caller
          FROM runs WHERE campaign_id = ${campaignId} ORDER BY called_number`
    )
    for (const run of runs) {
      const call = callsTo([run.called_number])[0]!
      expect(run.caller_number).toBe(call.from)
      expect(run.initial_caller).toBe(call.from)
    }
    const campaign = (await dialing.api.get(`/api/v1/campaign/${campaignId}`, auth)).body
    expect(campaign.caller_id_pool).toEqual({
      strategy: "round_robin",
      phone_number_ids: ids,
      max_calls_per_second_per_number: null,
      max_calls_per_day_per_number: null
    })
  })

  it("a pool that names no numbers takes every active number of the configuration, and no inactive one", async () => {
    const { account, auth, telephony, ids } = await accountWithNumbers(["+12125550201", "+12125550202", "+12125550203"])
    const inactive = await dialing.api.put(
      `/api/v1/organizations/telephony-configs/${telephony.id}/phone-numbers/${ids[2]}`,
      { is_active: false },
      auth
    )
    expect(inactive.status).toBe(200)
    const listed = await dialing.api.get(`/api/v1/organizations/telephony-configs/${telephony.id}/phone-numbers`, auth)
    const active = listed.body.phone_numbers
      .filter((number: any) => number.is_active)
      .map((number: any) => number.address)
      .sort()
    expect(active).toContain("+12125550201")
    expect(active).not.toContain("+12125550203")
    const recipients = Array.from({ length: 3 * active.length }, (_, i) => `+1415555${String(2000 + i)}`)
    const campaignId = await startedCampaign(dialing.server, dialing.api, account, contactsCsv(recipients), {
      rate_limit_per_second: 20,
      caller_id_pool: { strategy: "round_robin", phone_number_ids: null }
    })
    await completed(campaignId, auth)
    const froms = callsTo(recipients).map((call) => call.from)
    expect(froms).toHaveLength(recipients.length)
    // Round robin over every active number (the default caller ID included): each places three calls.
    expect([...new Set(froms)].sort()).toEqual(active)
    for (const number of active) expect(froms.filter((from) => from === number)).toHaveLength(3)
  })

  it("local presence: each recipient is called from the pool number closest to them", async () => {
    // The pool names its numbers: the configuration's default caller ID (a random +1 415 555 number) stays out.
    const { account, auth, ids } = await accountWithNumbers(["+12125550111", "+14155550112", "+442079460113"])
    const ny = "+12125553001"
    const sf = "+14155553002"
    const london = "+442079463003"
    const manchester = "+441614963004"
    const campaignId = await startedCampaign(
      dialing.server,
      dialing.api,
      account,
      contactsCsv([ny, sf, london, manchester]),
      { rate_limit_per_second: 10, caller_id_pool: { strategy: "local_presence", phone_number_ids: ids } }
    )
    await completed(campaignId, auth)
    const fromOf = (to: string) => callsTo([to]).map((call) => call.from)
    expect(fromOf(ny)).toEqual(["+12125550111"])
    expect(fromOf(sf)).toEqual(["+14155550112"])
    expect(fromOf(london)).toEqual(["+442079460113"])
    // No Manchester number: the country's is closer than the American ones.
    expect(fromOf(manchester)).toEqual(["+442079460113"])
  })

  it("keeps each number under its per-second and per-day caps, and lets the rest wait", async () => {
    const { account, auth, ids } = await accountWithNumbers(["+12125550121", "+12125550122"])
    const recipients = Array.from({ length: 6 }, (_, i) => `+1312556${String(1000 + i)}`)
    const campaignId = await startedCampaign(dialing.server, dialing.api, account, contactsCsv(recipients), {
      rate_limit_per_second: 20,
      caller_id_pool: {
        strategy: "round_robin",
        phone_number_ids: ids,
        max_calls_per_second_per_number: 1,
        max_calls_per_day_per_number: 2
      }
    })
    await eventually(async () => callsTo(recipients).length === 4, 20_000, "four calls placed")
    // Two numbers, two calls a day each: the other two contacts wait, neither failed nor skipped.
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const calls = callsTo(recipients)
    expect(calls).toHaveLength(4)
    for (const from of ["+12125550121", "+12125550122"]) {
      const times = calls.filter((call) => call.from === from).map((call) => call.createdAt).sort((a, b) => a - b)
      expect(times).toHaveLength(2)
      // One call a second per number: the second waited for the first to leave the window.
      expect(times[1]! - times[0]!).toBeGreaterThanOrEqual(900)
    }
    const progress = (await dialing.api.get(`/api/v1/campaign/${campaignId}/progress`, auth)).body
    expect(progress).toMatchObject({ state: "running", pending: 2, failed: 0 })

    // The day passes for the calls already made: the waiting two are called.
    await query((sql) =>
      sql`UPDATE campaign_attempts SET created_at = created_at - interval '25 hours'
          WHERE organization_id = ${account.organizationId}`
    )
    await completed(campaignId, auth)
    expect(callsTo(recipients)).toHaveLength(6)
  })

  it("takes a number the carrier refuses out of the pool, redials its contact from another, and pauses when none is left", async () => {
    const { account, auth, ids, telephony } = await accountWithNumbers(["+12125550131", "+12125550132"])
    dialing.carrier.unverifyCallerId("+12125550131")
    const recipients = Array.from({ length: 6 }, (_, i) => `+1312557${String(1000 + i)}`)
    const campaignId = await startedCampaign(dialing.server, dialing.api, account, contactsCsv(recipients), {
      rate_limit_per_second: 20,
      caller_id_pool: { strategy: "round_robin", phone_number_ids: ids }
    })
    await completed(campaignId, auth)
    const progress = (await dialing.api.get(`/api/v1/campaign/${campaignId}/progress`, auth)).body
    expect(progress).toMatchObject({ completed: 6, failed: 0 })
    // Every contact was reached from the number the carrier accepts; the refused one was tried once at most per claim.
    const accepted = callsTo(recipients)
    expect(new Set(accepted.map((call) => call.from))).toEqual(new Set(["+12125550132"]))
    const numbers =
      (await dialing.api.get(`/api/v1/organizations/telephony-configs/${telephony.id}/phone-numbers`, auth))
        .body.phone_numbers as ReadonlyArray<
          { address: string; caller_id_refused_at: string | null; caller_id_refused_reason: string | null }
        >
    const refused = numbers.find((number) => number.address === "+12125550131")!
    expect(refused.caller_id_refused_at).not.toBeNull()
    expect(refused.caller_id_refused_reason).toContain("21210")
    expect(numbers.find((number) => number.address === "+12125550132")!.caller_id_refused_at).toBeNull()
    const campaign = (await dialing.api.get(`/api/v1/campaign/${campaignId}`, auth)).body
    const removal = campaign.logs.filter((entry: { event: string }) => entry.event === "caller_id_removed")
    expect(removal).toHaveLength(1)
    expect(removal[0].message).toContain("+12125550131")
    const refusedRuns = await query<{ count: number }>((sql) =>
      sql`SELECT count(*)::int AS count FROM campaign_attempts
          WHERE campaign_id = ${campaignId} AND end_reason = 'caller_id_refused' AND outcome = 'canceled'`
    )
    expect(refusedRuns[0]!.count).toBeGreaterThanOrEqual(1)

    // The last number refused too: nothing left to dial from, the campaign pauses and says why.
    dialing.carrier.unverifyCallerId("+12125550132")
    const more = Array.from({ length: 3 }, (_, i) => `+1312558${String(1000 + i)}`)
    const second = await startedCampaign(dialing.server, dialing.api, account, contactsCsv(more), {
      caller_id_pool: { strategy: "round_robin", phone_number_ids: ids }
    })
    const paused = await eventually(
      async () => {
        const body = (await dialing.api.get(`/api/v1/campaign/${second}`, auth)).body
        return body.state === "paused" ? body : undefined
      },
      20_000,
      "campaign paused"
    )
    expect(paused.logs.map((entry: { event: string }) => entry.event)).toContain("caller_ids_unavailable")
    // Editing a number is how it comes back into the pool.
    const edited = await dialing.api.put(
      `/api/v1/organizations/telephony-configs/${telephony.id}/phone-numbers/${ids[0]}`,
      { label: "verified again" },
      auth
    )
    expect(edited.status).toBe(200)
    expect(edited.body.caller_id_refused_at).toBeNull()
  })

  it("refuses a pool naming numbers that are not the campaign configuration's", async () => {
    const other = await accountWithNumbers(["+12125550141"])
    const { account } = await accountWithNumbers([])
    await expect(
      startedCampaign(dialing.server, dialing.api, account, contactsCsv(["+13125559000"]), {
        caller_id_pool: { strategy: "round_robin", phone_number_ids: [other.ids[0]] }
      }, false)
    ).rejects.toThrow(/422.*caller_id_pool.*is not a number of the campaign's telephony configuration/)
    await expect(
      startedCampaign(dialing.server, dialing.api, account, contactsCsv(["+13125559000"]), {
        caller_id_pool: { strategy: "nearest" }
      }, false)
    ).rejects.toThrow(/422/)
  })
})
