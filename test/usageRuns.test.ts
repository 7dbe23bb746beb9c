import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SecretBox } from "../services/SecretBox.ts"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { insertCampaign, insertRuns, insertWorkflow } from "./support/runRows.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let owner: TestAccount
let other: TestAccount
/** ids[1]…ids[6] are the fixture runs below (ids[0] unused, so cases read like the table). */
let ids: Array<number>
let sales: number
let support: number
let otherRunId: number
let spring: number
let autumn: number

const RUNS = "/api/v1/organizations/usage/runs"

const runsPage = (account: TestAccount, query: Record<string, string | number | object>) => {
  const params = new URLSearchParams(
    Object.entries(query).map((
      [key, value]
    ): [string, string] => [key, typeof value === "object" ? JSON.stringify(value) : String(value)])
  )
  return api.get(`${RUNS}?${params}`, { token: account.token })
}

const idsOf = (body: { runs: Array<{ id: number }> }) => body.runs.map((run) => run.id)
const runs = (...which: Array<number>) => which.map((n) => ids[n]!)

beforeAll(async () => {
  server = await startServer({ PUBLIC_URL: "https://talkgraph.example.test" })
  api = client(server.url)
  owner = await newAccount(api, "usage-owner")
  other = await newAccount(api, "usage-other")
  sales = await insertWorkflow(server, owner.organizationId, "Sales")
  support = await insertWorkflow(server, owner.organizationId, "Support")
  spring = await insertCampaign(server, owner.organizationId, sales, "Spring")
  autumn = await insertCampaign(server, owner.organizationId, sales, "Autumn")
  ids = [
    0,
    ...await insertRuns(server, owner.organizationId, [
      {
        workflowId: sales,
        mode: "twilio",
        direction: "outbound",
        callerNumber: "+14155550101",
        calledNumber: "+442071230001",
        campaignId: spring,
        disposition: "interested",
        durationSeconds: 30,
        serviceTokens: 100,
        createdAt: "2024-05-01T00:00:00Z",
        recordingKey: "recordings/1.wav",
        initialContext: { first_name: "Ada" }
      },
      {
        workflowId: sales,
        mode: "vonage",
        direction: "inbound",
        callerNumber: "+14155550102",
        calledNumber: "+442071230002",
        campaignId: spring,
        disposition: "not_interested",
        durationSeconds: 120,
        serviceTokens: 200,
        createdAt: "2024-05-02T10:00:00Z"
      },
      {
        workflowId: support,
        mode: "webrtc",
        direction: "inbound",
        callerNumber: null,
        calledNumber: null,
        disposition: "interested",
        durationSeconds: 300,
        serviceTokens: 300,
        createdAt: "2024-05-03T10:00:00Z",
        transcriptKey: "transcripts/3.json"
      },
      {
        workflowId: support,
        mode: "textchat",
        direction: "inbound",
        callerNumber: null,
        calledNumber: null,
        disposition: null,
        durationSeconds: 0,
        serviceTokens: 50,
        createdAt: "2024-05-04T10:00:00Z"
      },
      {
        workflowId: sales,
        mode: "telnyx",
        direction: "outbound",
        callerNumber: "+13125550199",
        calledNumber: "+442071239999",
        campaignId: autumn,
        disposition: "voicemail",
        durationSeconds: 45,
        serviceTokens: 0,
        createdAt: "2024-05-05T10:00:00Z"
      },
      {
        workflowId: sales,
        mode: "plivo",
        direction: "outbound",
        callerNumber: "+14155550101",
        calledNumber: "+33155550000",
        disposition: "busy",
        durationSeconds: 120,
        serviceTokens: 75,
        createdAt: "2024-05-31T23:59:59Z"
      }
    ])
  ]
  const otherWorkflow = await insertWorkflow(server, other.organizationId, "Elsewhere")
  ;[otherRunId] = await insertRuns(server, other.organizationId, [
    { workflowId: otherWorkflow, campaignId: spring, disposition: "interested", createdAt: "2024-05-10T00:00:00Z" }
  ]) as [number]
})
afterAll(() => server?.close())

const f = (attribute: string, type: string, value: unknown) => ({ attribute, type, value })

describe("filters", () => {
  const cases: Array<[string, () => Array<object>, () => Array<number>]> = [
    ["no filter selects every run, newest first", () => [], () => runs(6, 5, 4, 3, 2, 1)],
    ["runId matches one run exactly", () => [f("runId", "number", { value: ids[3] })], () => runs(3)],
    ["workflowId matches the agent's runs", () => [f("workflowId", "number", { value: support })], () => runs(4, 3)],
    ["campaignId matches the campaign's runs", () => [f("campaignId", "number", { value: spring })], () => runs(2, 1)],
    ["callerNumber matches a substring", () => [f("callerNumber", "text", { value: "555010" })], () => runs(6, 2, 1)],
    [
      "callerNumber matches a pasted, formatted number",
      () => [f("callerNumber", "text", { value: "(415) 555-0101" })],
      () => runs(6, 1)
    ],
    ["callerNumber treats % as text", () => [f("callerNumber", "text", { value: "%" })], () => []],
    ["calledNumber matches a substring", () => [f("calledNumber", "text", { value: "4420712300" })], () => runs(2, 1)],
    [
      "dispositionCode matches any listed code",
      () => [f("dispositionCode", "multiSelect", { codes: ["interested", "busy"] })],
      () => runs(6, 3, 1)
    ],
    ["duration includes both bounds", () => [f("duration", "numberRange", { min: 45, max: 120 })], () => runs(6, 5, 2)],
    ["duration with equal bounds", () => [f("duration", "numberRange", { min: 120, max: 120 })], () => runs(6, 2)],
    ["duration with only a minimum", () => [f("duration", "numberRange", { min: 200 })], () => runs(3)],
    ["duration with only a maximum of zero", () => [f("duration", "numberRange", { max: 0 })], () => runs(4)],
    ["callDirection inbound", () => [f("callDirection", "radio", { status: "inbound" })], () => runs(4, 3, 2)],
    ["callDirection outbound", () => [f("callDirection", "radio", { status: "outbound" })], () => runs(6, 5, 1)],
    [
      "callDirection with any other value matches all",
      () => [f("callDirection", "radio", { status: "all" })],
      () => runs(6, 5, 4, 3, 2, 1)
    ],
    [
      "callChannel telephony groups the carriers",
      () => [f("callChannel", "radio", { status: "telephony" })],
      () => runs(6, 5, 2, 1)
    ],
    ["callChannel web", () => [f("callChannel", "radio", { status: "web" })], () => runs(3)],
    ["callChannel chat", () => [f("callChannel", "radio", { status: "chat" })], () => runs(4)],
    [
      "callChannel with any other value matches all",
      () => [f("callChannel", "radio", { status: "everything" })],
      () => runs(6, 5, 4, 3, 2, 1)
    ],
    ["three filters combine with AND", () => [
      f("callDirection", "radio", { status: "outbound" }),
      f("callChannel", "radio", { status: "telephony" }),
      f("duration", "numberRange", { min: 40 })
    ], () => runs(6, 5)],
    ["agent and disposition combine", () => [
      f("workflowId", "number", { value: sales }),
      f("dispositionCode", "multiSelect", { codes: ["interested"] })
    ], () => runs(1)],
    ["unknown attributes and unsupported types are ignored", () => [
      f("status", "text", { value: "completed" }),
      f("runId", "text", { value: "abc" }),
      f("dateRange", "dateRange", { from: "x" })
    ], () => runs(6, 5, 4, 3, 2, 1)]
  ]

  it.each(cases)("%s", async (_, filters, expected) => {
    const reply = await runsPage(owner, { filters: filters() })
    expect(reply.status).toBe(200)
    expect(idsOf(reply.body)).toEqual(expected())
    expect(reply.body.total_count).toBe(expected().length)
  })

  it("never reaches another organization's run, even by id", async () => {
    const reply = await runsPage(owner, { filters: [f("runId", "number", { value: otherRunId })] })
    expect(reply.body.runs).toEqual([])
    expect(reply.body.total_count).toBe(0)
  })
})

describe("date bounds", () => {
  it("includes runs created exactly at the start and at the end", async () => {
    const reply = await runsPage(owner, { start_date: "2024-05-02T10:00:00Z", end_date: "2024-05-04T10:00:00Z" })
    expect(idsOf(reply.body)).toEqual(runs(4, 3, 2))
  })

  it("reads a date alone as that whole day", async () => {
    const reply = await runsPage(owner, { start_date: "2024-05-31", end_date: "2024-05-31" })
    expect(idsOf(reply.body)).toEqual(runs(6))
  })

  it("excludes a run one second after the end", async () => {
    const reply = await runsPage(owner, { start_date: "2024-05-05T10:00:00Z", end_date: "2024-05-31T23:59:58Z" })
    expect(idsOf(reply.body)).toEqual(runs(5))
  })

  it("applies dates together with filters", async () => {
    const reply = await runsPage(owner, {
      start_date: "2024-05-02T00:00:00Z",
      filters: [f("dispositionCode", "multiSelect", { codes: ["interested"] })]
    })
    expect(idsOf(reply.body)).toEqual(runs(3))
  })
})

describe("sorting", () => {
  it("sorts by duration ascending, ties by id", async () => {
    const reply = await runsPage(owner, { sort_by: "duration", sort_order: "asc" })
    expect(idsOf(reply.body)).toEqual(runs(4, 1, 5, 2, 6, 3))
  })

  it("sorts by duration descending, ties by id descending", async () => {
    const reply = await runsPage(owner, { sort_by: "duration", sort_order: "desc" })
    expect(idsOf(reply.body)).toEqual(runs(3, 6, 2, 5, 1, 4))
  })

  it("keeps tied runs on the same pages whichever page is read", async () => {
    const pages = await Promise.all(
      [1, 2, 3].map((page) => runsPage(owner, { sort_by: "duration", sort_order: "asc", limit: 2, page }))
    )
    expect(pages.flatMap((reply) => idsOf(reply.body))).toEqual(runs(4, 1, 5, 2, 6, 3))
  })

  it("sorts by creation time oldest first on request, and by default for unknown sort fields", async () => {
    const reply = await runsPage(owner, { sort_by: "name", sort_order: "asc" })
    expect(idsOf(reply.body)).toEqual(runs(1, 2, 3, 4, 5, 6))
  })
})

describe("totals and paging", () => {
  it("totals cover the whole filtered set, not only the page", async () => {
    const reply = await runsPage(owner, { limit: 2, page: 2 })
    expect(reply.status).toBe(200)
    expect(reply.body).toMatchObject({
      total_count: 6,
      total_service_tokens: 725,
      total_duration_seconds: 615,
      page: 2,
      limit: 2,
      total_pages: 3
    })
    expect(idsOf(reply.body)).toEqual(runs(4, 3))
  })

  it("totals follow the filters", async () => {
    const reply = await runsPage(owner, { limit: 1, filters: [f("callDirection", "radio", { status: "inbound" })] })
    expect(reply.body).toMatchObject({
      total_count: 3,
      total_service_tokens: 550,
      total_duration_seconds: 420,
      total_pages: 3
    })
  })

  it("answers a page past the end with no runs and the real totals", async () => {
    const reply = await runsPage(owner, { limit: 5, page: 3 })
    expect(reply.body).toMatchObject({ runs: [], total_count: 6, total_pages: 2, page: 3 })
  })

  it("defaults to page 1 of 50", async () => {
    const reply = await runsPage(owner, {})
    expect(reply.body).toMatchObject({ page: 1, limit: 50, total_pages: 1 })
  })

  it("answers an organization without runs with zeros", async () => {
    const empty = await newAccount(api, "usage-empty")
    const reply = await runsPage(empty, {})
    expect(reply.body).toEqual({
      runs: [],
      total_service_tokens: 0,
      total_duration_seconds: 0,
      total_count: 0,
      page: 1,
      limit: 50,
      total_pages: 0
    })
  })
})

describe("run items", () => {
  it("describes each run with its agent, numbers, usage and context", async () => {
    const reply = await runsPage(owner, { filters: [f("runId", "number", { value: ids[1] })] })
    const [run] = reply.body.runs
    expect(run).toMatchObject({
      id: ids[1],
      workflow_id: sales,
      workflow_name: "Sales",
      name: "run-1",
      created_at: "2024-05-01T00:00:00.000Z",
      call_duration_seconds: 30,
      service_tokens: 100,
      caller_number: "+14155550101",
      called_number: "+442071230001",
      direction: "outbound",
      mode: "twilio",
      channel: "telephony",
      disposition: "interested",
      campaign_id: spring,
      initial_context: { first_name: "Ada" },
      gathered_context: { mapped_call_disposition: "interested" },
      transcript_url: null
    })
  })

  it("links recordings and transcripts with signed URLs that expire within the hour", async () => {
    const reply = await runsPage(owner, { sort_order: "asc" })
    const byId = new Map(reply.body.runs.map((run: any) => [run.id, run]))
    const recording = (byId.get(ids[1]) as any).recording_url as string
    const transcript = (byId.get(ids[3]) as any).transcript_url as string
    expect((byId.get(ids[3]) as any).recording_url).toBeNull()
    expect(recording).toMatch(
      new RegExp(`^https://talkgraph\\.example\\.test/api/v1/artifacts/${ids[1]}/recording\\?expires=\\d+&sig=`)
    )
    expect(transcript).toContain(`/api/v1/artifacts/${ids[3]}/transcript?expires=`)
    const url = new URL(recording)
    const expires = Number(url.searchParams.get("expires"))
    expect(expires * 1000).toBeGreaterThan(Date.now())
    expect(expires * 1000).toBeLessThanOrEqual(Date.now() + 3600_000)
    const valid = await server.run(
      Effect.map(
        SecretBox,
        (box) => box.verify("artifact", `${url.pathname}?expires=${expires}`, url.searchParams.get("sig")!)
      )
    )
    expect(valid).toBe(true)
  })
})

describe("validation", () => {
  it.each<[string, Record<string, string>, Array<string>]>([
    ["filters that are not JSON", { filters: "[{\"attribute\":" }, ["query", "filters"]],
    ["filters that are not an array", { filters: "{\"attribute\":\"runId\"}" }, ["query", "filters"]],
    ["a filter entry that is not an object", { filters: "[42]" }, ["query", "filters"]],
    ["a known filter with a malformed value", {
      filters: "[{\"attribute\":\"dispositionCode\",\"type\":\"multiSelect\",\"value\":{\"codes\":\"a\"}}]"
    }, [
      "query",
      "filters"
    ]],
    ["a start date that is not ISO 8601", { start_date: "last tuesday" }, ["query", "start_date"]],
    ["an end date that is not on the calendar", { end_date: "2024-02-30T00:00:00Z" }, ["query", "end_date"]],
    ["an end date before the start date", { start_date: "2024-05-02", end_date: "2024-05-01" }, ["query", "end_date"]],
    ["page 0", { page: "0" }, ["query", "page"]],
    ["a page that is not a number", { page: "first" }, ["query", "page"]],
    ["limit 0", { limit: "0" }, ["query", "limit"]],
    ["limit 101", { limit: "101" }, ["query", "limit"]],
    ["a fractional limit", { limit: "2.5" }, ["query", "limit"]],
    ["a sort order other than asc/desc", { sort_order: "sideways" }, ["query", "sort_order"]]
  ])("refuses %s with a 422 naming the parameter", async (_, query, loc) => {
    const reply = await api.get(`${RUNS}?${new URLSearchParams(query)}`, { token: owner.token })
    expect(reply.status).toBe(422)
    expect(reply.body.detail).toEqual(
      expect.arrayContaining([expect.objectContaining({ loc, msg: expect.any(String), type: expect.any(String) })])
    )
  })

  it("reports every bad parameter at once", async () => {
    const reply = await api.get(`${RUNS}?page=0&limit=500&filters=nope`, { token: owner.token })
    expect(reply.status).toBe(422)
    expect(reply.body.detail.map((problem: any) => problem.loc[1]).sort()).toEqual(["filters", "limit", "page"])
  })
})

describe("access", () => {
  it("refuses callers without credentials", async () => {
    const reply = await api.get(RUNS)
    expect(reply.status).toBe(401)
  })

  it("needs the usage:read scope on API keys", async () => {
    const narrow = await newApiKey(api, owner, ["agents:read"])
    const allowed = await newApiKey(api, owner, ["usage:read"])
    expect((await api.get(RUNS, { apiKey: narrow })).status).toBe(403)
    const reply = await api.get(RUNS, { apiKey: allowed })
    expect(reply.status).toBe(200)
    expect(reply.body.total_count).toBe(6)
  })

  it("links recordings and transcripts only for keys that may read conversations", async () => {
    const usageOnly = await newApiKey(api, owner, ["usage:read"])
    const withConversations = await newApiKey(api, owner, ["usage:read", "conversations:read"])
    const linksOf = async (apiKey: string) => {
      const reply = await api.get(`${RUNS}?sort_order=asc`, { apiKey })
      expect(reply.status).toBe(200)
      return reply.body.runs.flatMap((run: any) => [run.recording_url, run.transcript_url]).filter((link: unknown) =>
        link !== null
      )
    }
    expect(await linksOf(usageOnly)).toEqual([])
    expect(await linksOf(withConversations)).toHaveLength(2)
  })

  it("shows each organization only its own runs", async () => {
    const reply = await runsPage(other, {})
    expect(idsOf(reply.body)).toEqual([otherRunId])
    expect(reply.body.total_count).toBe(1)
  })
})
