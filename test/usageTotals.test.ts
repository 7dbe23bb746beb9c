import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { insertCampaign, insertRuns, insertWorkflow, type RunSeed } from "./support/runRows.ts"
import { type RunningServer, startServer } from "./support/server.ts"

/**
 * Totals are served from a daily rollup kept by a trigger; these tests change runs every way the
 * product will (insert, update of what is summed or grouped, campaign deletion, delete) and check
 * the report against totals computed here from the runs themselves.
 */
let server: RunningServer
let api: Client
let account: TestAccount
let workflows: [number, number]
let campaigns: [number, number]

interface StoredRun {
  readonly id: number
  readonly workflow_id: number
  readonly campaign_id: number | null
  readonly direction: string
  readonly channel: string
  readonly disposition: string | null
  readonly duration_seconds: number
  readonly service_tokens: number
  readonly created_at: Date
  readonly called_number: string | null
}

const storedRuns = () =>
  server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<StoredRun>`
      SELECT id, workflow_id, campaign_id, direction, channel, disposition, duration_seconds, service_tokens, created_at,
             called_number
      FROM runs WHERE organization_id = ${account.organizationId}`))

const modes = ["twilio", "webrtc", "textchat", "vonage"] as const
const dispositions = ["interested", "busy", null, "voicemail"] as const

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
  account = await newAccount(api, "totals")
  workflows = [
    await insertWorkflow(server, account.organizationId, "A"),
    await insertWorkflow(server, account.organizationId, "B")
  ]
  campaigns = [
    await insertCampaign(server, account.organizationId, workflows[0]),
    await insertCampaign(server, account.organizationId, workflows[1])
  ]
  const seeds: Array<RunSeed> = []
  for (let i = 0; i < 60; i++) {
    // Spread over May 1–6, including runs exactly on UTC midnight and one microsecond before it.
    const day = 1 + (i % 6)
    const time = i % 5 === 0 ? "00:00:00Z" : i % 5 === 1 ? "23:59:59.999Z" : `${String(i % 24).padStart(2, "0")}:30:00Z`
    seeds.push({
      workflowId: i % 2 === 0 ? workflows[0] : workflows[1],
      mode: modes[i % 4]!,
      direction: i % 3 === 0 ? "inbound" : "outbound",
      campaignId: i % 4 === 0 ? campaigns[0] : i % 4 === 1 ? campaigns[1] : null,
      disposition: dispositions[(i >> 1) % 4] ?? null,
      durationSeconds: (i * 17) % 200,
      serviceTokens: (i * 31) % 500,
      createdAt: `2024-05-0${day}T${time}`
    })
  }
  for (let i = 0; i < 24; i++) {
    // Around the months' ends (April 30, June 1–2, July 31): what the monthly rollup by duration cuts at.
    const at = [
      "2024-04-30T23:59:59.999Z",
      "2024-06-01T00:00:00Z",
      "2024-06-02T10:00:00Z",
      "2024-07-31T12:00:00Z"
    ][i % 4]!
    seeds.push({
      workflowId: workflows[i % 2]!,
      mode: modes[(i >> 1) % 4]!,
      direction: i % 3 === 0 ? "outbound" : "inbound",
      disposition: dispositions[i % 4] ?? null,
      // Bucket edges: 9, 10, 19, 20, and a few others.
      durationSeconds: [9, 10, 19, 20, 0, 125, 59, 60][i % 8]!,
      serviceTokens: (i * 13) % 300,
      // "+1415" is in the first; the second holds its digits but not after a "+".
      calledNumber: ["+14155550100", "+441415550000", "+15550000002"][i % 3]!,
      createdAt: at
    })
  }
  const ids = await insertRuns(server, account.organizationId, seeds)
  await server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    // What a finished call writes, what a corrected disposition writes, a move across days.
    yield* sql`UPDATE runs SET duration_seconds = duration_seconds + 1000, service_tokens = service_tokens + 7 WHERE id IN ${
      sql.in(ids.slice(0, 10))
    }`
    yield* sql`UPDATE runs SET disposition = 'callback', direction = 'inbound' WHERE id IN ${sql.in(ids.slice(10, 15))}`
    yield* sql`UPDATE runs SET created_at = created_at + interval '2 days' WHERE id IN ${sql.in(ids.slice(15, 20))}`
    yield* sql`UPDATE runs SET state = 'failed', error = 'carrier hung up' WHERE id IN ${sql.in(ids.slice(20, 25))}`
    yield* sql`DELETE FROM runs WHERE id IN ${sql.in(ids.slice(25, 30))}`
    yield* sql`DELETE FROM campaigns WHERE id = ${campaigns[1]}`
  }))
})
afterAll(() => server?.close())

const f = (attribute: string, type: string, value: unknown) => ({ attribute, type, value })

type Case = [string, Record<string, unknown>, (run: StoredRun) => boolean]

const within = (from: string | null, before: string | null) => (run: StoredRun) =>
  (from === null || run.created_at.getTime() >= Date.parse(from)) &&
  (before === null || run.created_at.getTime() < Date.parse(before))

// Built again inside each test: at collection time only the names are read, before any data exists.
const cases = (): Array<Case> => [
  ["everything", {}, () => true],
  [
    "whole days",
    { start_date: "2024-05-02", end_date: "2024-05-04" },
    within("2024-05-02T00:00:00Z", "2024-05-05T00:00:00Z")
  ],
  [
    "partial days at both ends",
    { start_date: "2024-05-02T12:00:00Z", end_date: "2024-05-05T06:00:00Z" },
    within(
      "2024-05-02T12:00:00Z",
      "2024-05-05T06:00:01Z"
    )
  ],
  [
    "a window inside one day",
    { start_date: "2024-05-03T01:00:00Z", end_date: "2024-05-03T22:00:00Z" },
    within(
      "2024-05-03T01:00:00Z",
      "2024-05-03T22:00:01Z"
    )
  ],
  ["only a start", { start_date: "2024-05-04T23:59:59.999Z" }, within("2024-05-04T23:59:59.999Z", null)],
  [
    "agent",
    { filters: [f("workflowId", "number", { value: workflows?.[1] })] },
    (run) => run.workflow_id === workflows?.[1]
  ],
  [
    "campaign",
    { filters: [f("campaignId", "number", { value: campaigns?.[0] })] },
    (run) => run.campaign_id === campaigns?.[0]
  ],
  ["deleted campaign", { filters: [f("campaignId", "number", { value: campaigns?.[1] })] }, () => false],
  [
    "dispositions",
    { filters: [f("dispositionCode", "multiSelect", { codes: ["busy", "callback"] })] },
    (run) => run.disposition === "busy" || run.disposition === "callback"
  ],
  [
    "direction",
    { filters: [f("callDirection", "radio", { status: "inbound" })] },
    (run) => run.direction === "inbound"
  ],
  ["channel with partial days", {
    start_date: "2024-05-01T18:00:00Z",
    end_date: "2024-05-06T03:00:00Z",
    filters: [f("callChannel", "radio", { status: "telephony" })]
  }, (run) => run.channel === "telephony" && within("2024-05-01T18:00:00Z", "2024-05-06T03:00:01Z")(run)],
  ["direction, channel and disposition", {
    filters: [
      f("callDirection", "radio", { status: "outbound" }),
      f("callChannel", "radio", { status: "web" }),
      f("dispositionCode", "multiSelect", { codes: ["interested", "voicemail"] })
    ]
  }, (run) =>
    run.direction === "outbound" && run.channel === "web" &&
    (run.disposition === "interested" || run.disposition === "voicemail")],
  ["agent and direction (counted from runs)", {
    filters: [f("workflowId", "number", { value: workflows?.[0] }), f("callDirection", "radio", { status: "outbound" })]
  }, (run) => run.workflow_id === workflows?.[0] && run.direction === "outbound"],
  [
    "duration",
    { filters: [f("duration", "numberRange", { min: 50, max: 1100 })] },
    (run) => run.duration_seconds >= 50 && run.duration_seconds <= 1100
  ],
  [
    "duration on bucket edges with direction (monthly rollup)",
    {
      filters: [f("duration", "numberRange", { min: 10, max: 19 }), f("callDirection", "radio", { status: "inbound" })]
    },
    (run) => run.duration_seconds >= 10 && run.duration_seconds <= 19 && run.direction === "inbound"
  ],
  [
    "duration cutting buckets, channel and dispositions",
    {
      filters: [
        f("duration", "numberRange", { min: 9, max: 1020 }),
        f("callChannel", "radio", { status: "telephony" }),
        f("dispositionCode", "multiSelect", { codes: ["busy", "interested", "callback"] })
      ]
    },
    (run) =>
      run.duration_seconds >= 9 && run.duration_seconds <= 1020 && run.channel === "telephony" &&
      ["busy", "interested", "callback"].includes(run.disposition ?? "")
  ],
  [
    "open duration range from a bucket's middle",
    { filters: [f("duration", "numberRange", { min: 15, max: null })] },
    (run) => run.duration_seconds >= 15
  ],
  [
    "duration below a bound, no disposition among the codes",
    {
      filters: [
        f("duration", "numberRange", { min: null, max: 59 }),
        f("dispositionCode", "multiSelect", { codes: ["voicemail"] })
      ]
    },
    (run) => run.duration_seconds <= 59 && run.disposition === "voicemail"
  ],
  [
    "duration over partial months at both ends and a whole month",
    {
      start_date: "2024-04-30T12:00:00Z",
      end_date: "2024-06-01T23:00:00Z",
      filters: [f("duration", "numberRange", { min: 5, max: 200 }), f("callDirection", "radio", { status: "outbound" })]
    },
    (run) =>
      run.duration_seconds >= 5 && run.duration_seconds <= 200 && run.direction === "outbound" &&
      within("2024-04-30T12:00:00Z", "2024-06-01T23:00:01Z")(run)
  ],
  [
    "duration within one month (counted from runs)",
    {
      start_date: "2024-05-02",
      end_date: "2024-05-05",
      filters: [f("duration", "numberRange", { min: 20, max: 300 })]
    },
    (run) =>
      run.duration_seconds >= 20 && run.duration_seconds <= 300 &&
      within("2024-05-02T00:00:00Z", "2024-05-06T00:00:00Z")(run)
  ],
  [
    "called number with its + (indexed by its digits)",
    { filters: [f("calledNumber", "text", { value: "+1415" })] },
    (run) => run.called_number?.includes("+1415") ?? false
  ]
]

describe("totals stay exact as runs change", () => {
  it.each(cases().map(([name]) => [name]))("%s", async (name) => {
    const [, query, matches] = cases().find(([candidate]) => candidate === name)!
    const expected = (await storedRuns()).filter(matches)
    const params = new URLSearchParams(
      Object.entries(query).map((
        [key, value]
      ): [string, string] => [key, typeof value === "string" ? value : JSON.stringify(value)])
    )
    const reply = await api.get(`/api/v1/organizations/usage/runs?${params}&limit=1`, { token: account.token })
    expect(reply.status).toBe(200)
    expect({
      total_count: reply.body.total_count,
      total_duration_seconds: reply.body.total_duration_seconds,
      total_service_tokens: reply.body.total_service_tokens
    }).toEqual({
      total_count: expected.length,
      total_duration_seconds: expected.reduce((sum, run) => sum + run.duration_seconds, 0),
      total_service_tokens: expected.reduce((sum, run) => sum + run.service_tokens, 0)
    })
    expect(expected.length).toBeGreaterThan(name === "deleted campaign" ? -1 : 0)
  })

  it("forgets an organization's totals when the organization is deleted", async () => {
    const doomed = await newAccount(api, "totals-doomed")
    await insertRuns(server, doomed.organizationId, [{
      workflowId: await insertWorkflow(server, doomed.organizationId)
    }])
    const remaining = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`DELETE FROM organizations WHERE id = ${doomed.organizationId}`
      return yield* sql<
        { count: number }
      >`SELECT (SELECT count(*) FROM run_daily_usage WHERE organization_id = ${doomed.organizationId})
             + (SELECT count(*) FROM run_monthly_usage WHERE organization_id = ${doomed.organizationId}) AS count`
    }))
    expect(remaining[0]!.count).toBe(0)
  })
})
