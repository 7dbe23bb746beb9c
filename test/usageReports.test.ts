import { SqlClient } from "@effect/sql"
import { parse } from "csv-parse/sync"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { insertRuns, insertWorkflow, setOrganizationTimezone } from "./support/runRows.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client

const BREAKDOWN = "/api/v1/organizations/usage/daily-breakdown"
const REPORT = "/api/v1/organizations/usage/runs/report"

const get = (path: string, account: TestAccount, query: Record<string, string> = {}) =>
  api.get(`${path}?${new URLSearchParams(query)}`, { token: account.token })

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

describe("daily breakdown", () => {
  it("counts runs, minutes and tokens per day in the organization's time zone, days without runs included", async () => {
    const account = await newAccount(api, "daily")
    await setOrganizationTimezone(server, account.organizationId, "America/New_York")
    const workflow = await insertWorkflow(server, account.organizationId)
    await insertRuns(server, account.organizationId, [
      // 23:30 on May 1 in New York (UTC-4)
      { workflowId: workflow, createdAt: "2024-05-02T03:30:00Z", durationSeconds: 90, serviceTokens: 10 },
      { workflowId: workflow, createdAt: "2024-05-02T05:00:00Z", durationSeconds: 30, serviceTokens: 20 },
      { workflowId: workflow, createdAt: "2024-05-02T20:00:00Z", durationSeconds: 60, serviceTokens: 30 },
      { workflowId: workflow, createdAt: "2024-05-04T12:00:00Z", durationSeconds: 15, serviceTokens: 40 },
      // after the window
      { workflowId: workflow, createdAt: "2024-05-05T04:00:00Z", durationSeconds: 999, serviceTokens: 999 }
    ])
    const reply = await get(BREAKDOWN, account, {
      start_date: "2024-05-01T04:00:00Z",
      end_date: "2024-05-05T03:59:59Z"
    })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({
      timezone: "America/New_York",
      days: [
        { date: "2024-05-01", runs: 1, duration_seconds: 90, minutes: 1.5, service_tokens: 10 },
        { date: "2024-05-02", runs: 2, duration_seconds: 90, minutes: 1.5, service_tokens: 50 },
        { date: "2024-05-03", runs: 0, duration_seconds: 0, minutes: 0, service_tokens: 0 },
        { date: "2024-05-04", runs: 1, duration_seconds: 15, minutes: 0.25, service_tokens: 40 }
      ],
      total_runs: 4,
      total_duration_seconds: 195,
      total_minutes: 3.25,
      total_service_tokens: 100
    })
  })

  it("applies the same filters as the runs list", async () => {
    const account = await newAccount(api, "daily-filtered")
    const workflow = await insertWorkflow(server, account.organizationId)
    await insertRuns(server, account.organizationId, [
      { workflowId: workflow, direction: "inbound", createdAt: "2024-06-01T10:00:00Z" },
      { workflowId: workflow, direction: "outbound", createdAt: "2024-06-01T11:00:00Z" },
      { workflowId: workflow, direction: "inbound", createdAt: "2024-06-03T10:00:00Z" }
    ])
    const reply = await get(BREAKDOWN, account, {
      filters: JSON.stringify([{ attribute: "callDirection", type: "radio", value: { status: "inbound" } }])
    })
    expect(reply.body.timezone).toBe("UTC")
    expect(reply.body.days.map((day: any) => [day.date, day.runs])).toEqual([
      ["2024-06-01", 1],
      ["2024-06-02", 0],
      ["2024-06-03", 1]
    ])
  })

  it("refuses malformed parameters with a 422", async () => {
    const account = await newAccount(api, "daily-invalid")
    const reply = await get(BREAKDOWN, account, { start_date: "soon", filters: "[" })
    expect(reply.status).toBe(422)
    expect(reply.body.detail.map((problem: any) => problem.loc)).toEqual([["query", "start_date"], [
      "query",
      "filters"
    ]])
  })

  it("shows only the caller's organization", async () => {
    const owner = await newAccount(api, "daily-owner")
    const stranger = await newAccount(api, "daily-stranger")
    await insertRuns(server, owner.organizationId, [{ workflowId: await insertWorkflow(server, owner.organizationId) }])
    const reply = await get(BREAKDOWN, stranger)
    expect(reply.body).toMatchObject({ days: [], total_runs: 0 })
  })
})

const csvRows = (text: string): Array<Record<string, string>> => parse(text, { columns: true })

describe("CSV report", () => {
  it("exports the filtered runs in the report's order as a CSV download", async () => {
    const account = await newAccount(api, "csv")
    const workflow = await insertWorkflow(server, account.organizationId, "Renewals")
    const [first, second] = await insertRuns(server, account.organizationId, [
      {
        workflowId: workflow,
        name: "call one",
        durationSeconds: 10,
        serviceTokens: 5,
        createdAt: "2024-05-01T09:00:00Z",
        disposition: "won"
      },
      {
        workflowId: workflow,
        name: "call two",
        durationSeconds: 20,
        serviceTokens: 6,
        createdAt: "2024-05-02T09:00:00Z"
      },
      { workflowId: workflow, name: "inbound", direction: "inbound", createdAt: "2024-05-03T09:00:00Z" }
    ])
    const reply = await get(REPORT, account, {
      filters: JSON.stringify([{ attribute: "callDirection", type: "radio", value: { status: "outbound" } }]),
      sort_by: "duration",
      sort_order: "asc"
    })
    expect(reply.status).toBe(200)
    expect(reply.headers.get("content-type")).toMatch(/^text\/csv/)
    expect(reply.headers.get("content-disposition")).toMatch(/attachment; filename="usage-runs\.csv"/)
    const text = reply.body as string
    expect(text.split("\r\n")[0]).toBe(
      "id,created_at,workflow_id,workflow_name,name,direction,channel,mode,caller_number,called_number,disposition,campaign_id,call_duration_seconds,service_tokens"
    )
    expect(csvRows(text)).toEqual([
      {
        id: String(first),
        created_at: "2024-05-01T09:00:00.000Z",
        workflow_id: String(workflow),
        workflow_name: "Renewals",
        name: "call one",
        direction: "outbound",
        channel: "telephony",
        mode: "twilio",
        caller_number: "'+15550000001",
        called_number: "'+15550000002",
        disposition: "won",
        campaign_id: "",
        call_duration_seconds: "10",
        service_tokens: "5"
      },
      expect.objectContaining({ id: String(second), name: "call two", disposition: "" })
    ])
  })

  it("neutralises spreadsheet formulas in every text cell", async () => {
    const account = await newAccount(api, "csv-injection")
    const workflow = await insertWorkflow(server, account.organizationId, "=cmd|'/C calc'!A0")
    await insertRuns(server, account.organizationId, [
      {
        workflowId: workflow,
        name: "@SUM(1+1)*cmd",
        callerNumber: "-2+3",
        calledNumber: "\t=1",
        disposition: "=HYPERLINK(\"http://evil\")"
      }
    ])
    const [row] = csvRows((await get(REPORT, account)).body)
    expect(row).toMatchObject({
      workflow_name: "'=cmd|'/C calc'!A0",
      name: "'@SUM(1+1)*cmd",
      caller_number: "'-2+3",
      called_number: "'\t=1",
      disposition: "'=HYPERLINK(\"http://evil\")"
    })
    for (const value of Object.values(row!)) expect(value).not.toMatch(/^[=+\-@\t\r]/)
  })

  it("streams exports longer than one database batch without losing or repeating runs, even on tied keys", async () => {
    const account = await newAccount(api, "csv-large")
    const workflow = await insertWorkflow(server, account.organizationId)
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      // 2,500 runs on five instants and three durations: every batch boundary falls inside a tie.
      yield* sql`
        INSERT INTO runs (organization_id, workflow_id, name, channel, mode, direction, duration_seconds, created_at)
        SELECT ${account.organizationId}, ${workflow}, 'bulk-' || g, 'telephony', 'twilio', 'outbound', g % 3,
               '2024-05-01T00:00:00Z'::timestamptz + (g % 5) * interval '1 microsecond'
        FROM generate_series(1, 2500) g`
    }))
    for (const sort_by of ["created_at", "duration"]) {
      const text = (await get(REPORT, account, { sort_by, sort_order: "desc" })).body as string
      const rows = csvRows(text)
      expect(rows).toHaveLength(2500)
      expect(new Set(rows.map((row) => row.id)).size).toBe(2500)
      const listed = await get("/api/v1/organizations/usage/runs", account, {
        sort_by,
        sort_order: "desc",
        limit: "100",
        page: "13"
      })
      expect(rows.slice(1200, 1300).map((row) => Number(row.id))).toEqual(listed.body.runs.map((run: any) => run.id))
    }
  })

  it("exports only the caller's organization and needs usage:read", async () => {
    const owner = await newAccount(api, "csv-owner")
    const stranger = await newAccount(api, "csv-stranger")
    await insertRuns(server, owner.organizationId, [{ workflowId: await insertWorkflow(server, owner.organizationId) }])
    expect(csvRows((await get(REPORT, stranger)).body)).toEqual([])
    const narrow = await newApiKey(api, owner, ["campaigns:read"])
    expect((await api.get(REPORT, { apiKey: narrow })).status).toBe(403)
    const allowed = await newApiKey(api, owner, ["usage:read"])
    expect(csvRows((await api.get(REPORT, { apiKey: allowed })).body)).toHaveLength(1)
  })

  it("refuses malformed parameters with a 422 instead of a broken file", async () => {
    const account = await newAccount(api, "csv-invalid")
    const reply = await get(REPORT, account, { end_date: "2024-13-01" })
    expect(reply.status).toBe(422)
    expect(reply.body.detail[0].loc).toEqual(["query", "end_date"])
  })
})
