import { SqlClient } from "@effect/sql"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { closedWindow, newTelephony, uploadCsv } from "./support/uploads.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

const CONTACTS =
  "phone_number,first_name\n+14155550101,Ann\n+14155550102,Bob\n+14155550103,Cy\nbogus,Dan\n+14155550101,Ann again\n"

const newCampaign = async (account: TestAccount, extra: Record<string, unknown> = {}, csv = CONTACTS) => {
  const workflowId = await insertWorkflow(server, account.organizationId, {
    name: "Sales agent",
    variables: ["first_name"]
  })
  const sourceId = await uploadCsv(api, { token: account.token }, csv)
  const reply = await api.post("/api/v1/campaign/create", {
    name: "Spring promo",
    workflow_id: workflowId,
    source_type: "csv",
    source_id: sourceId,
    ...extra
  }, { token: account.token })
  if (reply.status !== 200) throw new Error(`campaign create failed: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body
}

const setOutcomes = (campaignId: number, outcomes: Record<string, string>) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    for (const [phone, outcome] of Object.entries(outcomes)) {
      yield* sql`UPDATE campaign_contacts SET last_outcome = ${outcome}, state = 'completed', attempt_count = 1
                 WHERE campaign_id = ${campaignId} AND phone_number = ${phone}`
    }
  }))

describe("creating a campaign", () => {
  it("imports the CSV and answers every CampaignResponse field with the documented defaults", async () => {
    const account = await newAccount(api)
    const campaign = await newCampaign(account)
    expect(campaign).toMatchObject({
      name: "Spring promo",
      workflow_name: "Sales agent",
      state: "created",
      source_type: "csv",
      total_rows: 3,
      processed_rows: 0,
      failed_rows: 0,
      executed_count: 0,
      total_queued_count: 3,
      started_at: null,
      completed_at: null,
      retry_config: {
        enabled: true,
        max_retries: 2,
        retry_delay_seconds: 120,
        retry_on_busy: true,
        retry_on_no_answer: true,
        retry_on_voicemail: false
      },
      max_concurrency: null,
      rate_limit_per_second: 1,
      schedule_config: null,
      circuit_breaker: { enabled: true, failure_threshold: 0.5, window_seconds: 120, min_calls_in_window: 5 },
      parent_campaign_id: null,
      redialed_campaign_id: null,
      telephony_configuration_id: null,
      telephony_configuration_name: null
    })
    expect(campaign.warnings).toEqual([
      "1 row skipped: invalid phone number (without a default region, numbers must start with + and a country code) (row 5)",
      "1 row skipped: duplicate phone number (row 6)"
    ])
    expect(campaign.logs).toEqual([
      expect.objectContaining({
        level: "info",
        event: "contacts_imported",
        message: expect.stringContaining("3 contacts imported")
      })
    ])
  })

  it("fills partial settings over the defaults and validates their ranges", async () => {
    const account = await newAccount(api)
    const campaign = await newCampaign(account, {
      retry_config: { max_retries: 5, retry_on_voicemail: true },
      max_concurrency: 10,
      rate_limit_per_second: 5,
      schedule_config: {
        timezone: "Europe/Paris",
        slots: [{ day_of_week: 0, start_time: "09:00", end_time: "17:30" }]
      },
      circuit_breaker: { enabled: false }
    })
    expect(campaign.retry_config).toEqual({
      enabled: true,
      max_retries: 5,
      retry_delay_seconds: 120,
      retry_on_busy: true,
      retry_on_no_answer: true,
      retry_on_voicemail: true
    })
    expect(campaign.schedule_config).toEqual({
      enabled: true,
      timezone: "Europe/Paris",
      slots: [{ day_of_week: 0, start_time: "09:00", end_time: "17:30" }]
    })
    expect(campaign.circuit_breaker.enabled).toBe(false)

    const workflowId = await insertWorkflow(server, account.organizationId)
    const bad = await api.post("/api/v1/campaign/create", {
      name: "Bad",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: "organizations/1/contacts/x.csv",
      retry_config: { max_retries: 11 },
      rate_limit_per_second: 0,
      max_concurrency: 101,
      circuit_breaker: { failure_threshold: 1.5 },
      schedule_config: { slots: [{ day_of_week: 7, start_time: "18:00", end_time: "09:00" }] }
    }, { token: account.token })
    expect(bad.status).toBe(422)
    const locs = bad.body.detail.map((problem: { loc: Array<string | number> }) => problem.loc.join("."))
    expect(locs).toEqual(expect.arrayContaining([
      "body.retry_config.max_retries",
      "body.rate_limit_per_second",
      "body.max_concurrency",
      "body.circuit_breaker.failure_threshold",
      "body.schedule_config.slots.0.day_of_week"
    ]))

    const zone = await api.post("/api/v1/campaign/create", {
      name: "Bad zone",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: await uploadCsv(api, { token: account.token }, CONTACTS),
      schedule_config: { timezone: "Mars/Olympus", slots: [{ day_of_week: 1, start_time: "09:00", end_time: "10:00" }] }
    }, { token: account.token })
    expect(zone.status).toBe(422)
    expect(zone.body.detail[0]).toMatchObject({
      loc: ["body", "schedule_config", "timezone"],
      msg: "Unknown IANA time zone \"Mars/Olympus\""
    })
  })

  it("takes null for a setting as its default: on create, on PATCH, and on redial (the parent's)", async () => {
    const account = await newAccount(api)
    const campaign = await newCampaign(account, {
      retry_config: null,
      circuit_breaker: null,
      schedule_config: null,
      rate_limit_per_second: null,
      max_concurrency: null
    })
    expect(campaign).toMatchObject({
      retry_config: {
        enabled: true,
        max_retries: 2,
        retry_delay_seconds: 120,
        retry_on_busy: true,
        retry_on_no_answer: true,
        retry_on_voicemail: false
      },
      circuit_breaker: { enabled: true, failure_threshold: 0.5, window_seconds: 120, min_calls_in_window: 5 },
      schedule_config: null,
      rate_limit_per_second: 1,
      max_concurrency: null
    })

    const patch = (body: unknown) => api.patch(`/api/v1/campaign/${campaign.id}`, body, { token: account.token })
    const tuned = await patch({
      retry_config: { max_retries: 4 },
      circuit_breaker: { enabled: false },
      rate_limit_per_second: 7
    })
    expect(tuned.body).toMatchObject({
      retry_config: { max_retries: 4 },
      circuit_breaker: { enabled: false },
      rate_limit_per_second: 7
    })
    const reset = await patch({ retry_config: null, circuit_breaker: null, rate_limit_per_second: null })
    expect(reset.status).toBe(200)
    expect(reset.body).toMatchObject({
      retry_config: { max_retries: 2 },
      circuit_breaker: { enabled: true },
      rate_limit_per_second: 1
    })
    await patch({ retry_config: { max_retries: 4 } })

    await api.post(`/api/v1/campaign/${campaign.id}/cancel`, undefined, { token: account.token })
    await setOutcomes(campaign.id, { "+14155550101": "busy" })
    const child = await api.post(
      `/api/v1/campaign/${campaign.id}/redial`,
      { retry_on_busy: true, retry_config: null },
      { token: account.token }
    )
    expect(child.status).toBe(200)
    expect(child.body.retry_config.max_retries).toBe(4)
  })

  it("refuses a CSV that misses a column the workflow uses, naming it", async () => {
    const account = await newAccount(api)
    const workflowId = await insertWorkflow(server, account.organizationId, { variables: ["first_name", "plan"] })
    const sourceId = await uploadCsv(api, { token: account.token }, CONTACTS)
    const reply = await api.post("/api/v1/campaign/create", {
      name: "x",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: sourceId
    }, {
      token: account.token
    })
    expect(reply.status).toBe(422)
    expect(reply.body.detail).toEqual([
      {
        loc: ["body", "source_id"],
        msg: "The workflow uses {{plan}} but the CSV has no column of that name",
        type: "csv_invalid"
      }
    ])
  })

  it("reports structural problems with row numbers and stores no campaign", async () => {
    const account = await newAccount(api)
    const rows = Array.from({ length: 8 }, (_, i) => `+1415555${2000 + i},x,fax`).join("\n")
    await expect(newCampaign(account, {}, `phone_number,first_name,greeting_override_type\n${rows}\n`)).rejects.toThrow(
      /422.*Rows 2, 3, 4, 5, 6 and 3 more: greeting_override_type must be/
    )
    const list = await api.get("/api/v1/campaign/", { token: account.token })
    expect(list.body.total_count).toBe(0)
  })

  it("reads numbers without a country code in the campaign's default region", async () => {
    const account = await newAccount(api)
    const campaign = await newCampaign(
      account,
      { default_region: "gb" },
      "phone_number,first_name\n020 7946 0958,Ann\n+14155550101,Bob\n"
    )
    expect(campaign.total_rows).toBe(2)
    expect(campaign.default_region).toBe("GB")
    const report = await api.get(`/api/v1/campaign/${campaign.id}/report`, { token: account.token })
    expect(report.body).toContain("+442079460958")
  })

  it("imports an Excel export with semicolons, a stray cell and columns named like Object's properties, kept as data", async () => {
    const account = await newAccount(api)
    const csv = "phone_number;first_name;__proto__;constructor;toString\r\n" +
      "+14155550101;Ann;a;b;c\r\n+14155550102;Bob;d;e;f;stray\r\n"
    const campaign = await newCampaign(account, {}, csv)
    expect(campaign.total_rows).toBe(2)
    expect(campaign.warnings).toEqual([
      "1 row has more fields than the header's 5 columns; the extra fields were ignored (row 3)"
    ])
    const stored = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ context: string }>`
        SELECT context::text AS context FROM campaign_contacts WHERE campaign_id = ${campaign.id} ORDER BY id`
    }))
    expect(stored.map((row) => JSON.parse(row.context))).toEqual([
      JSON.parse("{\"first_name\":\"Ann\",\"__proto__\":\"a\",\"constructor\":\"b\",\"toString\":\"c\"}"),
      JSON.parse("{\"first_name\":\"Bob\",\"__proto__\":\"d\",\"constructor\":\"e\",\"toString\":\"f\"}")
    ])
    const report = await api.get(`/api/v1/campaign/${campaign.id}/report`, { token: account.token })
    const rows: Array<Array<string>> = parse(report.body)
    expect(rows.map((row) => row.slice(9))).toEqual([
      ["first_name", "__proto__", "constructor", "toString"],
      ["Ann", "a", "b", "c"],
      ["Bob", "d", "e", "f"]
    ])
  })

  it("answers 404 for another organization's workflow or telephony configuration", async () => {
    const owner = await newAccount(api)
    const other = await newAccount(api)
    const foreignWorkflow = await insertWorkflow(server, other.organizationId)
    const foreignTelephony = await newTelephony(api, { token: other.token })
    const sourceId = await uploadCsv(api, { token: owner.token }, CONTACTS)
    const byWorkflow = await api.post("/api/v1/campaign/create", {
      name: "x",
      workflow_id: foreignWorkflow,
      source_type: "csv",
      source_id: sourceId
    }, { token: owner.token })
    expect(byWorkflow.status).toBe(404)
    expect(byWorkflow.body.detail).toBe(`Workflow ${foreignWorkflow} not found`)
    const ownWorkflow = await insertWorkflow(server, owner.organizationId)
    const byTelephony = await api.post("/api/v1/campaign/create", {
      name: "x",
      workflow_id: ownWorkflow,
      source_type: "csv",
      source_id: sourceId,
      telephony_configuration_id: foreignTelephony
    }, { token: owner.token })
    expect(byTelephony.status).toBe(404)
  })
})

describe("lifecycle", () => {
  it("refuses to start without a usable telephony configuration, saying so", async () => {
    const account = await newAccount(api)
    const campaign = await newCampaign(account)
    const none = await api.post(`/api/v1/campaign/${campaign.id}/start`, undefined, { token: account.token })
    expect(none.status).toBe(422)
    expect(none.body.detail[0].msg).toMatch(
      /No usable telephony configuration: the organization has no default outbound/
    )

    await api.post("/api/v1/organizations/telephony-configs", {
      name: "No numbers",
      is_default_outbound: true,
      config: { provider: "telnyx", api_key: "KEY0123456789abcdef", api_base_url: "http://127.0.0.1:9" }
    }, { token: account.token })
    const noNumbers = await api.post(`/api/v1/campaign/${campaign.id}/start`, undefined, { token: account.token })
    expect(noNumbers.status).toBe(422)
    expect(noNumbers.body.detail[0].msg).toMatch(
      /"No numbers" cannot place calls. The configuration has no active phone number/
    )
  })

  it("moves created → running ⇄ paused → cancelled, logging each transition, and refuses illegal moves with 409", async () => {
    const account = await newAccount(api)
    const telephonyId = await newTelephony(api, { token: account.token })
    const campaign = await newCampaign(account, { schedule_config: closedWindow() })
    const at = (command: string) =>
      api.post(`/api/v1/campaign/${campaign.id}/${command}`, undefined, { token: account.token })

    expect((await at("pause")).body).toEqual({
      detail: "Cannot pause a campaign that is created; pause is allowed only when it is running"
    })
    const started = await at("start")
    expect(started.status).toBe(200)
    expect(started.body.state).toBe("running")
    expect(started.body.started_at).not.toBeNull()
    expect(started.body.telephony_configuration_id).toBe(telephonyId)
    expect(started.body.telephony_configuration_name).toBe("Twilio main")

    const again = await at("start")
    expect(again.status).toBe(409)
    expect(again.body.detail).toMatch(/Cannot start a campaign that is running/)
    expect((await at("resume")).status).toBe(409)

    expect((await at("pause")).body.state).toBe("paused")
    expect((await at("pause")).status).toBe(409)
    expect((await at("resume")).body.state).toBe("running")
    const cancelled = await at("cancel")
    expect(cancelled.body.state).toBe("cancelled")
    expect(cancelled.body.completed_at).not.toBeNull()
    for (const command of ["start", "pause", "resume", "cancel"]) {
      const refused = await at(command)
      expect(refused.status).toBe(409)
      expect(refused.body.detail).toMatch(/that is cancelled/)
    }
    expect(cancelled.body.logs.map((entry: { event: string }) => entry.event)).toEqual([
      "contacts_imported",
      "campaign_started",
      "campaign_paused",
      "campaign_resumed",
      "campaign_cancelled"
    ])
    const progress = await api.get(`/api/v1/campaign/${campaign.id}/progress`, { token: account.token })
    expect(progress.body).toMatchObject({ state: "cancelled", total_rows: 3, pending: 0, cancelled: 3, live_calls: 0 })
  })

  it("keeps a started campaign running with every contact pending while its calling window is closed", async () => {
    const account = await newAccount(api)
    await newTelephony(api, { token: account.token })
    const campaign = await newCampaign(account, { schedule_config: closedWindow() })
    await api.post(`/api/v1/campaign/${campaign.id}/start`, undefined, { token: account.token })
    await new Promise((resolve) => setTimeout(resolve, 1500))
    const progress = await api.get(`/api/v1/campaign/${campaign.id}/progress`, { token: account.token })
    expect(progress.body).toMatchObject({ state: "running", pending: 3, dialing: 0, completed: 0, executed_count: 0 })
    expect(progress.body.dispatch.within_schedule).toBe(false)
    expect(new Date(progress.body.dispatch.next_window_at).getTime()).toBeGreaterThan(Date.now() + 24 * 3600_000)
  })

  it("lets only one of two simultaneous starts win", async () => {
    const account = await newAccount(api)
    await newTelephony(api, { token: account.token })
    const campaign = await newCampaign(account, { schedule_config: closedWindow() })
    const replies = await Promise.all(
      [1, 2, 3].map(() => api.post(`/api/v1/campaign/${campaign.id}/start`, undefined, { token: account.token }))
    )
    expect(replies.map((reply) => reply.status).sort()).toEqual([200, 409, 409])
  })
})

describe("PATCH", () => {
  it("changes settings while created or paused, and refuses them with 409 while running", async () => {
    const account = await newAccount(api)
    await newTelephony(api, { token: account.token })
    const campaign = await newCampaign(account, { schedule_config: closedWindow() })
    const patch = (body: unknown) => api.patch(`/api/v1/campaign/${campaign.id}`, body, { token: account.token })

    const renamed = await patch({
      name: "Summer promo",
      retry_config: { retry_delay_seconds: 600 },
      rate_limit_per_second: 3
    })
    expect(renamed.status).toBe(200)
    expect(renamed.body).toMatchObject({ name: "Summer promo", rate_limit_per_second: 3 })
    expect(renamed.body.retry_config).toMatchObject({ retry_delay_seconds: 600, max_retries: 2 })

    await api.post(`/api/v1/campaign/${campaign.id}/start`, undefined, { token: account.token })
    const running = await patch({ rate_limit_per_second: 10 })
    expect(running.status).toBe(409)
    expect(running.body.detail).toMatch(/while it is created or paused/)

    await api.post(`/api/v1/campaign/${campaign.id}/pause`, undefined, { token: account.token })
    const paused = await patch({
      max_concurrency: 4,
      schedule_config: { slots: [{ day_of_week: 5, start_time: "10:00", end_time: "12:00" }] }
    })
    expect(paused.status).toBe(200)
    expect(paused.body.max_concurrency).toBe(4)
    expect(paused.body.schedule_config).toEqual({
      enabled: true,
      timezone: "UTC",
      slots: [{ day_of_week: 5, start_time: "10:00", end_time: "12:00" }]
    })
    expect((await patch({ schedule_config: null })).body.schedule_config).toBeNull()
    expect((await patch({ rate_limit_per_second: 1000 })).status).toBe(422)
    expect(paused.body.logs.at(-1)).toMatchObject({ event: "settings_updated" })
  })
})

describe("redial", () => {
  it("creates a child campaign of the contacts whose last outcome matches, linked both ways, once", async () => {
    const account = await newAccount(api)
    const parent = await newCampaign(account)
    await setOutcomes(parent.id, { "+14155550101": "busy", "+14155550102": "completed", "+14155550103": "no-answer" })

    const early = await api.post(`/api/v1/campaign/${parent.id}/redial`, { retry_on_busy: true }, {
      token: account.token
    })
    expect(early.status).toBe(409)
    await api.post(`/api/v1/campaign/${parent.id}/cancel`, undefined, { token: account.token })

    const noReason = await api.post(`/api/v1/campaign/${parent.id}/redial`, {}, { token: account.token })
    expect(noReason.status).toBe(422)
    const nobody = await api.post(`/api/v1/campaign/${parent.id}/redial`, { retry_on_voicemail: true }, {
      token: account.token
    })
    expect(nobody.status).toBe(422)
    expect(nobody.body.detail[0].msg).toMatch(/there is nobody to redial/)

    const child = await api.post(`/api/v1/campaign/${parent.id}/redial`, {
      retry_on_busy: true,
      retry_on_no_answer: true,
      retry_config: { max_retries: 0 }
    }, { token: account.token })
    expect(child.status).toBe(200)
    expect(child.body).toMatchObject({
      name: "Spring promo (redial)",
      state: "created",
      parent_campaign_id: parent.id,
      total_rows: 2,
      total_queued_count: 2,
      import: { status: "ready", contacts_loaded: 2, progress: 1 }
    })
    expect(child.body.retry_config.max_retries).toBe(0)
    const report = await api.get(`/api/v1/campaign/${child.body.id}/report`, { token: account.token })
    expect(report.body).toContain("+14155550101")
    expect(report.body).toContain("+14155550103")
    expect(report.body).not.toContain("+14155550102")

    const reloaded = await api.get(`/api/v1/campaign/${parent.id}`, { token: account.token })
    expect(reloaded.body.redialed_campaign_id).toBe(child.body.id)
    const twice = await api.post(`/api/v1/campaign/${parent.id}/redial`, { retry_on_busy: true }, {
      token: account.token
    })
    expect(twice.status).toBe(409)
  })
})

describe("reading campaigns", () => {
  it("lists campaigns newest first, paginated", async () => {
    const account = await newAccount(api)
    for (const _ of [1, 2, 3]) await newCampaign(account)
    const first = await api.get("/api/v1/campaign/?page=1&limit=2", { token: account.token })
    expect(first.body).toMatchObject({ total_count: 3, page: 1, limit: 2, total_pages: 2 })
    expect(first.body.campaigns).toHaveLength(2)
    const second = await api.get("/api/v1/campaign/?page=2&limit=2", { token: account.token })
    expect(second.body.campaigns).toHaveLength(1)
    expect(first.body.campaigns[0].id).toBeGreaterThan(second.body.campaigns[0].id)
    expect((await api.get("/api/v1/campaign/?limit=500", { token: account.token })).status).toBe(422)
  })

  it("lists the campaign's runs and streams a CSV report with the original columns", async () => {
    const account = await newAccount(api)
    const campaign = await newCampaign(
      account,
      {},
      "phone_number,first_name,note\n+14155550101,Ann,\"says \"\"hi\"\", often\"\n"
    )
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [contact] = yield* sql<{ id: number }>`SELECT id FROM campaign_contacts WHERE campaign_id = ${campaign.id}`
      const [run] = yield* sql<{ id: number }>`
        INSERT INTO runs (organization_id, workflow_id, name, channel, mode, direction, campaign_id, contact_id, called_number,
                          disposition, duration_seconds, state)
        VALUES (${account.organizationId}, ${campaign.workflow_id}, 'WR-1', 'telephony', 'twilio', 'outbound', ${campaign.id},
                ${contact!.id}, '+14155550101', 'interested', 42, 'completed')
        RETURNING id`
      yield* sql`UPDATE campaign_contacts SET last_run_id = ${run!.id}, last_outcome = 'completed', state = 'completed',
                 attempt_count = 1 WHERE id = ${contact!.id}`
    }))
    const runs = await api.get(`/api/v1/campaign/${campaign.id}/runs`, { token: account.token })
    expect(runs.status).toBe(200)
    expect(runs.body).toMatchObject({ total_count: 1, page: 1, limit: 20 })
    expect(runs.body.runs[0]).toMatchObject({
      mode: "twilio",
      direction: "outbound",
      called_number: "+14155550101",
      disposition: "interested"
    })

    const report = await fetch(`${server.url}/api/v1/campaign/${campaign.id}/report`, {
      headers: { authorization: `Bearer ${account.token}` }
    })
    expect(report.status).toBe(200)
    expect(report.headers.get("content-type")).toMatch(/^text\/csv/)
    expect(report.headers.get("content-disposition")).toBe(`attachment; filename="campaign-${campaign.id}-report.csv"`)
    const lines = (await report.text()).split("\r\n")
    expect(lines[0]).toBe(
      "row_number,phone_number,contact_state,attempts,last_outcome,last_attempt_at,last_run_id,disposition,duration_seconds,first_name,note"
    )
    expect(lines[1]).toMatch(/^2,'\+14155550101,completed,1,completed,,\d+,interested,42,Ann,"says ""hi"", often"$/)
  })

  it("neutralises spreadsheet formulas in every text cell of the report, column names included", async () => {
    const account = await newAccount(api)
    const payloads = ["-2+3+cmd|' /C calc'!A0", "+1+HYPERLINK(\"http://evil.example\")", "=1+1", "@SUM(1)", "-5"]
    const csv = [
      `phone_number,first_name,=cmd|' /C calc'!A0`,
      ...payloads.map((payload, i) => `+1415555${2100 + i},"${payload.replaceAll("\"", "\"\"")}",x`)
    ].join("\n")
    const campaign = await newCampaign(account, {}, csv)
    const report = await api.get(`/api/v1/campaign/${campaign.id}/report`, { token: account.token })
    const rows: Array<Array<string>> = parse(report.body, { relax_column_count: false })
    expect(rows[0]!.at(-1)).toBe(`'=cmd|' /C calc'!A0`)
    expect(rows.slice(1).map((row) => row[9])).toEqual(payloads.map((payload) => `'${payload}`))
    for (const row of rows) for (const cell of row) expect(cell).not.toMatch(/^[=+\-@\t\r]/)
  })
})

describe("access", () => {
  it("answers 404 on every endpoint for another organization's campaign", async () => {
    const owner = await newAccount(api)
    const intruder = await newAccount(api)
    const campaign = await newCampaign(owner)
    const as = { token: intruder.token }
    const replies = await Promise.all([
      api.get(`/api/v1/campaign/${campaign.id}`, as),
      api.patch(`/api/v1/campaign/${campaign.id}`, { name: "mine" }, as),
      api.post(`/api/v1/campaign/${campaign.id}/start`, undefined, as),
      api.post(`/api/v1/campaign/${campaign.id}/pause`, undefined, as),
      api.post(`/api/v1/campaign/${campaign.id}/resume`, undefined, as),
      api.post(`/api/v1/campaign/${campaign.id}/cancel`, undefined, as),
      api.post(`/api/v1/campaign/${campaign.id}/redial`, { retry_on_busy: true }, as),
      api.get(`/api/v1/campaign/${campaign.id}/progress`, as),
      api.get(`/api/v1/campaign/${campaign.id}/runs`, as),
      api.get(`/api/v1/campaign/${campaign.id}/report`, as)
    ])
    expect(replies.map((reply) => reply.status)).toEqual(Array(10).fill(404))
    expect(replies[0]!.body).toEqual({ detail: `Campaign ${campaign.id} not found` })
    const list = await api.get("/api/v1/campaign/", as)
    expect(list.body.campaigns).toEqual([])
  })

  it("needs campaigns:read to read and campaigns:write to change", async () => {
    const account = await newAccount(api)
    const campaign = await newCampaign(account)
    const reader = await newApiKey(api, account, ["campaigns:read"])
    expect((await api.get(`/api/v1/campaign/${campaign.id}`, { apiKey: reader })).status).toBe(200)
    const refused = await api.post(`/api/v1/campaign/${campaign.id}/cancel`, undefined, { apiKey: reader })
    expect(refused.status).toBe(403)
    expect(refused.body.detail).toBe("This API key lacks the \"campaigns:write\" scope")
    const telephonyOnly = await newApiKey(api, account, ["telephony:write"])
    expect((await api.get("/api/v1/campaign/", { apiKey: telephonyOnly })).status).toBe(403)
    expect((await api.get("/api/v1/campaign/")).status).toBe(401)
  })
})
