import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseDefaultReview, qualityReviewOf, reviewDecision, samplePoint } from "../src/quality/qualityReview.ts"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { runnableDefinition } from "./support/workflowGraphs.ts"

// Quality review of finished runs: the agent's quality_review setting, the background reviewer
// (its sample, the default rubric, a custom prompt, a malformed answer), the review on the run,
// the usage filters, the per-day aggregate and the CSV export, each scoped to the organization.

const GOOD = { score: 7, tags: ["dead_air"], sentiment: "neutral", summary: "The caller asked about prices." }

/** The reviewer model: a default-rubric request answers GOOD, or nonsense for a run saying MALFORMED; a custom prompt gets its own JSON. */
const reviewerModel = (request: any) => {
  const conversation = String(request.messages?.at(-1)?.content ?? "")
  if (conversation.includes("MALFORMED")) return reply.content("I think it went well, maybe a 7?")
  if (request.response_format?.json_schema?.name === "quality_review") return reply.json(GOOD)
  return reply.content("{\"grade\": \"A\", \"followed_script\": true}")
}

let server: RunningServer
let api: Client
let llm: ScriptedLlm

beforeAll(async () => {
  llm = await startScriptedLlm({ answer: reviewerModel })
  server = await startServer({}, { ownDatabase: true })
  api = client(server.url)
})
afterAll(async () => {
  await server?.close()
  await llm?.close()
})

const createAgent = async (account: TestAccount, qualityReview: Record<string, unknown>) => {
  const created = await api.post("/api/v1/workflow/create/definition", {
    name: "Reviewed agent",
    workflow_definition: runnableDefinition(),
    workflow_configurations: { quality_review: qualityReview }
  }, { token: account.token })
  expect(created.status).toBe(200)
  return created.body.id as number
}

interface FinishedRun {
  readonly durationSeconds?: number
  readonly mode?: string
  readonly said?: string
}

/** Finished runs of the agent's published version, written as the engine ends them (the trigger queues reviews). */
const finishRuns = (account: TestAccount, agentId: number, runs: ReadonlyArray<FinishedRun>) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const ids: Array<number> = []
    for (const run of runs) {
      const transcript = [
        { role: "assistant", text: "Hello, how can I help?", node_id: "start", at: "2026-05-01T10:00:00Z" },
        { role: "user", text: run.said ?? "How much is it?", node_id: "start", at: "2026-05-01T10:00:05Z" }
      ]
      const [row] = yield* sql<{ id: number }>`
        INSERT INTO runs (organization_id, workflow_id, definition_id, version_number, name, channel, mode, direction,
                          state, duration_seconds, transcript, started_at, ended_at)
        SELECT ${account.organizationId}, ${agentId}, d.id, d.version_number, 'Reviewed run',
               ${run.mode === "testchat" ? "chat" : "telephony"}, ${run.mode ?? "twilio"}, 'outbound', 'completed',
               ${run.durationSeconds ?? 60}, ${JSON.stringify(transcript)}::jsonb, now(), now()
        FROM workflow_definitions d WHERE d.workflow_id = ${agentId} AND d.version_status = 'published'
        RETURNING id`
      ids.push(Number(row!.id))
    }
    return ids
  }))

const reviewsOf = (runIds: ReadonlyArray<number>) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return yield* sql<{ run_id: string; status: string; skip_reason: string | null; failure: string | null }>`
      SELECT run_id, status, skip_reason, failure FROM quality_reviews WHERE run_id IN ${
      sql.in(runIds)
    } ORDER BY run_id`
  }))

/** Waits (with a deadline) until every queued review of the runs is settled. */
const settled = async (runIds: ReadonlyArray<number>) => {
  const deadline = Date.now() + 30_000
  while (true) {
    const rows = await reviewsOf(runIds)
    if (rows.every((row) => row.status !== "pending" && row.status !== "reviewing")) return rows
    if (Date.now() > deadline) throw new Error(`reviews still waiting: ${JSON.stringify(rows)}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const usageRuns = (account: TestAccount, filters: unknown) =>
  api.get(`/api/v1/organizations/usage/runs?limit=100&filters=${encodeURIComponent(JSON.stringify(filters))}`, {
    token: account.token
  })

describe("the quality review rules", () => {
  it("samples by a hash of the run id, skips short runs and voicemail unless asked, and reads answers strictly", () => {
    const setting = qualityReviewOf({
      quality_review: { enabled: true, sample_rate: 50, min_duration_seconds: 20 }
    })!
    const picked = Array.from({ length: 400 }, (_, index) => index + 1).filter((id) =>
      reviewDecision(setting, { id, durationSeconds: 60, voicemail: false }).review
    )
    expect(picked.length).toBeGreaterThan(150)
    expect(picked.length).toBeLessThan(250)
    for (const id of picked) expect(samplePoint(id)).toBeLessThan(5000)
    expect(reviewDecision(setting, { id: picked[0]!, durationSeconds: 19, voicemail: false }))
      .toEqual({ review: false, reason: "too_short" })
    expect(reviewDecision(setting, { id: picked[0]!, durationSeconds: 60, voicemail: true }))
      .toEqual({ review: false, reason: "voicemail" })
    expect(
      reviewDecision({ ...setting, includeVoicemail: true }, { id: picked[0]!, durationSeconds: 60, voicemail: true })
    )
      .toEqual({ review: true })

    expect(parseDefaultReview("```json\n" + JSON.stringify(GOOD) + "\n```")).toEqual({ ok: true, result: GOOD })
    expect(parseDefaultReview(JSON.stringify({ ...GOOD, score: 11 }))).toMatchObject({ ok: false })
    expect(parseDefaultReview(JSON.stringify({ ...GOOD, tags: ["rude"] }))).toMatchObject({ ok: false })
    expect(parseDefaultReview("seven")).toEqual({ ok: false, reason: "the answer is not JSON" })
  })
})

describe("quality review of finished runs", () => {
  it("refuses an unusable setting naming each field", async () => {
    const account = await newAccount(api)
    const wrong = await api.post("/api/v1/workflow/create/definition", {
      name: "Wrong review",
      workflow_definition: runnableDefinition(),
      workflow_configurations: {
        quality_review: { enabled: "yes", sample_rate: 150, rubric: { prompt: "Grade it." }, colour: "red" }
      }
    }, { token: account.token })
    expect(wrong.status).toBe(422)
    const locs = wrong.body.detail.map((problem: any) => problem.loc.join("."))
    expect(locs).toEqual(expect.arrayContaining([
      "body.workflow_configurations.quality_review.enabled",
      "body.workflow_configurations.quality_review.sample_rate",
      "body.workflow_configurations.quality_review.rubric",
      "body.workflow_configurations.quality_review.colour"
    ]))
  })

  it("reviews the sampled runs with the default rubric, shows the review on the run, filters, aggregates and exports it", async () => {
    const account = await newAccount(api)
    await useLlm(api, account, llm.baseUrl)
    const key = await newApiKey(api, account, ["conversations:read"])
    const agentId = await createAgent(account, { enabled: true, sample_rate: 50, min_duration_seconds: 10 })
    const runIds = await finishRuns(account, agentId, Array.from({ length: 12 }, () => ({})))
    const [short] = await finishRuns(account, agentId, [{ durationSeconds: 5 }])
    const [rehearsal] = await finishRuns(account, agentId, [{ mode: "testchat" }])

    const rows = await settled([...runIds, short!, rehearsal!])
    const sampled = runIds.filter((id) => samplePoint(id) < 5000)
    const byRun = new Map(rows.map((row) => [Number(row.run_id), row]))
    for (const id of runIds) {
      expect(byRun.get(id)?.status).toBe(sampled.includes(id) ? "reviewed" : "skipped")
      if (!sampled.includes(id)) expect(byRun.get(id)?.skip_reason).toBe("not_sampled")
    }
    expect(byRun.get(short!)).toMatchObject({ status: "skipped", skip_reason: "too_short" })
    expect(byRun.has(rehearsal!)).toBe(false)

    const reviewedId = sampled[0]
    expect(reviewedId).toBeDefined()
    const shown = await api.get(`/api/v2/conversations/${reviewedId}`, { apiKey: key })
    expect(shown.status).toBe(200)
    expect(shown.body.data.quality_review).toMatchObject({
      status: "reviewed",
      rubric: "default",
      score: 7,
      tags: ["dead_air"],
      sentiment: "neutral",
      summary: GOOD.summary,
      model: "scripted-model"
    })
    expect(shown.body.data.usage.service_tokens).toBeGreaterThan(0)
    const unsampled = runIds.find((id) => !sampled.includes(id))!
    expect((await api.get(`/api/v2/conversations/${unsampled}`, { apiKey: key })).body.data.quality_review)
      .toMatchObject({ status: "skipped", skip_reason: "not_sampled" })

    const byScore = await usageRuns(account, [
      { attribute: "qualityScore", type: "numberRange", value: { min: 7, max: 8 } }
    ])
    expect(byScore.status).toBe(200)
    expect(byScore.body.runs.map((run: any) => run.id).sort()).toEqual([...sampled].sort())
    expect(byScore.body.runs[0].quality_review.score).toBe(7)
    const tooHigh = await usageRuns(account, [{ attribute: "qualityScore", type: "numberRange", value: { min: 8 } }])
    expect(tooHigh.body.total_count).toBe(0)
    const byTag = await usageRuns(account, [{
      attribute: "qualityTag",
      type: "multiSelect",
      value: { tags: ["dead_air"] }
    }])
    expect(byTag.body.total_count).toBe(sampled.length)
    const otherTag = await usageRuns(account, [
      { attribute: "qualityTag", type: "multiSelect", value: { tags: ["agent_looping"] } }
    ])
    expect(otherTag.body.total_count).toBe(0)
    const badTag = await usageRuns(account, [{
      attribute: "qualityTag",
      type: "multiSelect",
      value: { tags: ["rude"] }
    }])
    expect(badTag.status).toBe(422)

    const today = new Date().toISOString().slice(0, 10)
    const perDay = await api.get(`/api/v2/agents/${agentId}/quality?from=${today}&to=${today}`, { apiKey: key })
    expect(perDay.status).toBe(200)
    expect(perDay.body.data.days).toEqual([{
      date: today,
      reviewed: sampled.length,
      failed: 0,
      mean_score: 7,
      tags: {
        dead_air: sampled.length,
        caller_frustrated: 0,
        agent_looping: 0,
        improper_reply: 0,
        caller_detects_ai: 0
      }
    }])
    const badWindow = await api.get(`/api/v2/agents/${agentId}/quality?from=yesterday`, { apiKey: key })
    expect(badWindow.status).toBe(422)

    const csv = await api.get(`/api/v2/quality-reviews/export?agent_id=${agentId}&tag=dead_air&min_score=7`, {
      apiKey: key
    })
    expect(csv.status).toBe(200)
    const lines = String(csv.body).trim().split("\r\n")
    expect(lines[0]).toBe(
      "run_id,agent_id,agent_name,status,rubric,model,score,tags,sentiment,summary,result,failure,reviewed_at"
    )
    expect(lines.length).toBe(1 + sampled.length)
    expect(lines[1]).toContain(",reviewed,default,scripted-model,7,dead_air,neutral,")

    const stranger = await newAccount(api, "stranger")
    const strangerKey = await newApiKey(api, stranger, ["conversations:read"])
    expect((await api.get(`/api/v2/agents/${agentId}/quality`, { apiKey: strangerKey })).status).toBe(404)
    expect((await api.get(`/api/v2/conversations/${reviewedId}`, { apiKey: strangerKey })).status).toBe(404)
    const strangerCsv = await api.get(`/api/v2/quality-reviews/export`, { apiKey: strangerKey })
    expect(String(strangerCsv.body).trim().split("\r\n")).toHaveLength(1)
    expect(
      (await usageRuns(stranger, [{ attribute: "qualityScore", type: "numberRange", value: { min: 1 } }])).body
        .total_count
    ).toBe(0)
  })

  it("keeps a custom prompt's JSON answer, and records a malformed answer as a failed review", async () => {
    const account = await newAccount(api)
    await useLlm(api, account, llm.baseUrl)
    const key = await newApiKey(api, account, ["conversations:read"])
    const custom = await createAgent(account, {
      enabled: true,
      rubric: { prompt: "Grade the agent A to F and say whether it followed the script, as a JSON object." }
    })
    const strict = await createAgent(account, { enabled: true })
    const [customRun] = await finishRuns(account, custom, [{}])
    const [badRun] = await finishRuns(account, strict, [{ said: "MALFORMED" }])
    await settled([customRun!, badRun!])

    const customShown = await api.get(`/api/v2/conversations/${customRun}`, { apiKey: key })
    expect(customShown.body.data.quality_review).toMatchObject({
      status: "reviewed",
      rubric: "custom",
      score: null,
      tags: [],
      result: { grade: "A", followed_script: true }
    })
    const request = llm.requests.find((sent) => sent.body.messages?.[0]?.content?.startsWith("Grade the agent A to F"))
    expect(request?.body.response_format).toBeUndefined()

    const badShown = await api.get(`/api/v2/conversations/${badRun}`, { apiKey: key })
    expect(badShown.body.data.quality_review).toMatchObject({
      status: "failed",
      rubric: "default",
      score: null,
      failure: "the answer is not JSON"
    })
    const perDay = await api.get(`/api/v2/agents/${strict}/quality`, { apiKey: key })
    expect(perDay.body.data.days).toMatchObject([{ reviewed: 0, failed: 1, mean_score: null }])
  })
})
