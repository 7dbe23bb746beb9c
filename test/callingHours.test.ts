import { describe, expect, it } from "vitest"
import { localTime } from "../src/compliance/callingHours.ts"
import { newAccount } from "./support/accounts.ts"
import { carrierTelephony, eventually, numbersFrom, startedCampaign } from "./support/dialerFixtures.ts"
import { dialingServerForTests } from "./support/dialingServer.ts"

const dialing = dialingServerForTests(200)
const { query, calledNumbers } = dialing

/** The fixed-offset zone whose local hour is `hour` now (Etc/GMT-6 is UTC+6). */
const zoneWithLocalHour = (hour: number) => {
  const utcHour = new Date().getUTCHours()
  let offset = hour - utcHour
  if (offset < -12) offset += 24
  if (offset > 14) offset -= 24
  return offset === 0 ? "Etc/GMT" : `Etc/GMT${offset > 0 ? "-" : "+"}${Math.abs(offset)}`
}

const everyDay = [1, 2, 3, 4, 5, 6, 7]

describe("calling hours in the recipient's local time", () => {
  it("are off by default, validated, admin-set and the organization's own", async () => {
    const account = await newAccount(dialing.api)
    const auth = { token: account.token }
    const initial = await dialing.api.get("/api/v1/organizations/compliance-policy", auth)
    expect(initial.status).toBe(200)
    expect(initial.body.calling_hours).toMatchObject({ enabled: false, start: "09:00", end: "20:00" })
    const hours = { enabled: true, start: "08:30", end: "21:00", days: [1, 2, 3, 4, 5], holidays: ["2026-12-25"] }
    const put = await dialing.api.put("/api/v1/organizations/compliance-policy", { calling_hours: hours }, auth)
    expect(put.status).toBe(200)
    expect((await dialing.api.get("/api/v1/organizations/compliance-policy", auth)).body).toEqual({
      calling_hours: hours,
      frequency_caps: { per_day: null, per_7_days: null }
    })
    for (
      const bad of [
        { ...hours, start: "21:00", end: "08:30" },
        { ...hours, start: "25:00" },
        { ...hours, days: [0] },
        { ...hours, days: [] },
        { ...hours, holidays: ["25/12/2026"] }
      ]
    ) {
      expect((await dialing.api.put("/api/v1/organizations/compliance-policy", { calling_hours: bad }, auth)).status)
        .toBe(422)
    }
    const other = await newAccount(dialing.api)
    expect(
      (await dialing.api.get("/api/v1/organizations/compliance-policy", { token: other.token })).body.calling_hours
        .enabled
    )
      .toBe(false)
  })

  it("calls contacts inside their hours, keeps the others waiting (not failed) with a count in progress, and calls them once their hours open", async () => {
    const account = await newAccount(dialing.api)
    const auth = { token: account.token }
    await carrierTelephony(dialing.api, auth, dialing.carrier)
    const open = zoneWithLocalHour(12)
    const closed = zoneWithLocalHour(4)
    const hours = { enabled: true, start: "09:00", end: "20:00", days: everyDay, holidays: [] }
    expect((await dialing.api.put("/api/v1/organizations/compliance-policy", { calling_hours: hours }, auth)).status)
      .toBe(200)
    const numbers = numbersFrom("+1415630", 6)
    const csv = `phone_number,first_name,timezone\n${
      numbers.map((number, index) => `${number},P${index},${index % 2 === 0 ? open : closed}`).join("\n")
    }\n`
    const inside = numbers.filter((_, index) => index % 2 === 0)
    const outside = numbers.filter((_, index) => index % 2 === 1)
    const id = await startedCampaign(dialing.server, dialing.api, account, csv, { rate_limit_per_second: 10 })

    const progress = await eventually(
      async () => {
        const body = (await dialing.api.get(`/api/v1/campaign/${id}/progress`, auth)).body
        return body.completed === 3 && body.waiting_for_local_hours === 3 ? body : undefined
      },
      20_000,
      "inside contacts called, outside ones waiting"
    )
    expect(progress).toMatchObject({ state: "running", pending: 3, failed: 0, skipped: 0 })
    expect(new Set(calledNumbers().filter((number) => numbers.includes(number)))).toEqual(new Set(inside))
    // They wait for 09:00 in their own zone.
    const waiting = await query<{ next_attempt_at: Date; skip_reason: string }>((sql) =>
      sql`SELECT next_attempt_at, skip_reason FROM campaign_contacts WHERE campaign_id = ${id} AND state = 'pending'`
    )
    for (const row of waiting) {
      expect(row.skip_reason).toBe("outside_local_hours")
      const local = localTime(closed, row.next_attempt_at.getTime())
      expect(local.minutes).toBe(9 * 60)
      expect(row.next_attempt_at.getTime()).toBeGreaterThan(Date.now())
    }

    // Due again while their hours are still closed: the claim looks again and they keep waiting.
    await query((sql) =>
      sql`UPDATE campaign_contacts SET next_attempt_at = now() WHERE campaign_id = ${id} AND state = 'pending'`
    )
    await new Promise((resolve) => setTimeout(resolve, 1500))
    expect(calledNumbers().filter((number) => outside.includes(number))).toEqual([])
    expect((await dialing.api.get(`/api/v1/campaign/${id}/progress`, auth)).body.waiting_for_local_hours).toBe(3)

    // Their hours open (the window now covers their local time): they are called and the campaign completes.
    const nightShift = { ...hours, start: "00:00", end: "23:59" }
    await dialing.api.put("/api/v1/organizations/compliance-policy", { calling_hours: nightShift }, auth)
    await query((sql) =>
      sql`UPDATE campaign_contacts SET next_attempt_at = now() WHERE campaign_id = ${id} AND state = 'pending'`
    )
    const done = await eventually(
      async () => {
        const body = (await dialing.api.get(`/api/v1/campaign/${id}/progress`, auth)).body
        return body.state === "completed" ? body : undefined
      },
      20_000,
      "campaign completed"
    )
    expect(done).toMatchObject({ completed: 6, waiting_for_local_hours: 0 })
    expect(new Set(calledNumbers().filter((number) => numbers.includes(number)))).toEqual(new Set(numbers))
  })

  it("a campaign's own calling hours replace the organization's, and are refused when invalid", async () => {
    const account = await newAccount(dialing.api)
    const auth = { token: account.token }
    await carrierTelephony(dialing.api, auth, dialing.carrier)
    const closed = zoneWithLocalHour(4)
    const orgHours = { enabled: true, start: "09:00", end: "20:00", days: everyDay, holidays: [] }
    await dialing.api.put("/api/v1/organizations/compliance-policy", { calling_hours: orgHours }, auth)
    const numbers = numbersFrom("+1415640", 2)
    const csv = `phone_number,first_name,timezone\n${numbers.map((number) => `${number},P,${closed}`).join("\n")}\n`
    const ownHours = { enabled: true, start: "00:00", end: "23:59", days: everyDay, holidays: [] }
    const id = await startedCampaign(dialing.server, dialing.api, account, csv, { calling_hours: ownHours })
    expect((await dialing.api.get(`/api/v1/campaign/${id}`, auth)).body.calling_hours).toEqual(ownHours)
    await eventually(
      async () => (await dialing.api.get(`/api/v1/campaign/${id}/progress`, auth)).body.state === "completed",
      20_000,
      "campaign completed under its own hours"
    )
    expect(new Set(calledNumbers().filter((number) => numbers.includes(number)))).toEqual(new Set(numbers))

    const refused = await dialing.api.patch(`/api/v1/campaign/${id}`, {
      calling_hours: { ...ownHours, start: "22:00", end: "08:00" }
    }, auth)
    expect(refused.status).toBe(422)
  })

  it("finds the zone from the number when there is no timezone column", async () => {
    const account = await newAccount(dialing.api)
    const csv = "phone_number,first_name\n+12125550123,A\n+61293744000,B\n+18505551234,C\n"
    const id = await startedCampaign(dialing.server, dialing.api, account, csv, {}, false)
    const rows = await query<{ phone_number: string; time_zones: string }>((sql) =>
      sql`SELECT phone_number, time_zones FROM campaign_contacts WHERE campaign_id = ${id} ORDER BY row_number`
    )
    expect(rows).toEqual([
      { phone_number: "+12125550123", time_zones: "America/New_York" },
      { phone_number: "+61293744000", time_zones: "Australia/Sydney" },
      { phone_number: "+18505551234", time_zones: "America/Chicago America/New_York" }
    ])
    const [campaign] = await query<{ contact_zones: ReadonlyArray<string> }>((sql) =>
      sql`SELECT contact_zones FROM campaigns WHERE id = ${id}`
    )
    expect([...campaign!.contact_zones].sort()).toEqual([
      "America/Chicago America/New_York",
      "America/New_York",
      "Australia/Sydney"
    ])
  })
})
