import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { caseResults, compareVersions, overallPassRate, suitePassed } from "../../src/agentTests/passRates.ts"
import type { TestCase } from "../../src/agentTests/testCase.ts"
import type { TestConversation, TestedVersion, TestMode, TestRun } from "../../src/agentTests/testRunRecord.ts"
import type { TranscriptTurn } from "../../src/conversation/transcript.ts"

/** What a test run was asked, with the cases as they were when it started (later edits do not change it). */
export interface TestRunPlan {
  readonly version: TestedVersion
  readonly compare_with: TestedVersion | null
  readonly repetitions: number
  readonly concurrency: number
  readonly pass_threshold: number
  /** Absent on runs from before voice mode: text. */
  readonly mode?: TestMode
  readonly voice_speed?: number
  readonly cases: ReadonlyArray<TestCase>
  /** For a run on the draft: the stored draft's fingerprint when it started (see `publish_requires_tests`). */
  readonly draft_fingerprint?: string | null
}

export interface EndedCall {
  readonly state: string
  readonly end_reason: string | null
  readonly node_id: string | null
  readonly gathered_context: Readonly<Record<string, unknown>>
  readonly transcript: ReadonlyArray<TranscriptTurn>
}

interface RunRow {
  readonly id: number
  readonly workflow_id: number
  readonly state: TestRun["status"]
  readonly request: TestRunPlan
  readonly results: ReadonlyArray<TestConversation>
  readonly error: string | null
  readonly created_at: Date
  readonly started_at: Date | null
  readonly ended_at: Date | null
}

/** The versions a run talks to, its own first. */
export const versionsOf = (plan: TestRunPlan): ReadonlyArray<TestedVersion> =>
  plan.compare_with === null || plan.compare_with === plan.version ? [plan.version] : [plan.version, plan.compare_with]

const toTestRun = (row: RunRow): TestRun => {
  const plan = row.request
  // Results stored before voice mode have no dead air.
  const results = row.results.map((result) => ({ ...result, dead_air_ms: result.dead_air_ms ?? null }))
  const cases = caseResults(plan.cases, versionsOf(plan), results)
  return {
    id: Number(row.id),
    agent_id: Number(row.workflow_id),
    status: row.state,
    version: plan.version,
    compare_with: plan.compare_with,
    repetitions: plan.repetitions,
    concurrency: plan.concurrency,
    pass_threshold: plan.pass_threshold,
    mode: plan.mode ?? "text",
    voice_speed: plan.mode === "voice" ? plan.voice_speed ?? 1 : null,
    test_ids: plan.cases.map((testCase) => testCase.id),
    passed: row.state === "completed" ? suitePassed(cases, plan.version, plan.pass_threshold) : null,
    pass_rate: overallPassRate(results, plan.version),
    error: row.error,
    cases,
    comparison: plan.compare_with === null || plan.compare_with === plan.version
      ? null
      : compareVersions(cases, plan.version, plan.compare_with),
    created_at: row.created_at,
    started_at: row.started_at,
    ended_at: row.ended_at
  }
}

/** Test runs, addressed under their organization and agent. Database failures are defects. */
export const makeTestRunRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const columns = sql.literal("id, workflow_id, state, request, results, error, created_at, started_at, ended_at")

  const insert = (organizationId: number, agentId: number, plan: TestRunPlan, now: Date) =>
    sql<RunRow>`
      INSERT INTO agent_test_runs (organization_id, workflow_id, state, request, created_at, heartbeat_at)
      VALUES (${organizationId}, ${agentId}, 'queued', ${JSON.stringify(plan)}::jsonb, ${now}, now())
      RETURNING ${columns}`.pipe(Effect.map((rows) => toTestRun(rows[0]!)), Effect.orDie)

  const one = (organizationId: number, agentId: number, runId: number) =>
    sql<RunRow>`
      SELECT ${columns} FROM agent_test_runs
      WHERE id = ${runId} AND organization_id = ${organizationId} AND workflow_id = ${agentId}`.pipe(
      Effect.map((rows) => (rows[0] ? toTestRun(rows[0]) : null)),
      Effect.orDie
    )

  const page = (organizationId: number, agentId: number, limit: number, offset: number) =>
    Effect.all({
      items: sql<RunRow>`
        SELECT ${columns} FROM agent_test_runs WHERE organization_id = ${organizationId} AND workflow_id = ${agentId}
        ORDER BY id DESC LIMIT ${limit} OFFSET ${offset}`.pipe(Effect.map((rows) => rows.map(toTestRun))),
      total: sql<{ count: number }>`
        SELECT count(*)::integer AS count FROM agent_test_runs
        WHERE organization_id = ${organizationId} AND workflow_id = ${agentId}`.pipe(
        Effect.map((rows) => rows[0]?.count ?? 0)
      )
    }).pipe(Effect.orDie)

  const markRunning = (runId: number, now: Date) =>
    sql`UPDATE agent_test_runs SET state = 'running', started_at = ${now}, heartbeat_at = now() WHERE id = ${runId}`
      .pipe(Effect.orDie)

  /** Appends one finished conversation: only it is sent, however many the run already holds. */
  const addResult = (runId: number, result: TestConversation) =>
    sql`
      UPDATE agent_test_runs SET results = results || ${JSON.stringify([result])}::jsonb, heartbeat_at = now()
      WHERE id = ${runId}`.pipe(Effect.orDie)

  const finish = (runId: number, state: "completed" | "failed", error: string | null, now: Date) =>
    sql`UPDATE agent_test_runs SET state = ${state}, error = ${error}, ended_at = ${now} WHERE id = ${runId}`.pipe(
      Effect.orDie
    )

  /** Bills the simulated caller's and the judge's tokens to the conversation's run, with the agent's. */
  const addTokens = (organizationId: number, conversationId: number, prompt: number, completion: number) =>
    sql`
      UPDATE runs SET prompt_tokens = prompt_tokens + ${prompt}, completion_tokens = completion_tokens + ${completion},
        service_tokens = service_tokens + ${prompt + completion}
      WHERE id = ${conversationId} AND organization_id = ${organizationId}`.pipe(Effect.orDie)

  /** A voice test call as stored once it ended: what the checks read. */
  const endedCall = (organizationId: number, conversationId: number) =>
    sql<EndedCall>`
      SELECT state, end_reason, conversation->'state'->>'node_id' AS node_id, gathered_context, transcript
      FROM runs WHERE id = ${conversationId} AND organization_id = ${organizationId}`.pipe(
      Effect.map((rows) => rows[0] ?? null),
      Effect.orDie
    )

  /** The runs this process holds are alive. */
  const beat = (runIds: ReadonlyArray<number>) =>
    runIds.length === 0
      ? Effect.void
      : sql`UPDATE agent_test_runs SET heartbeat_at = now() WHERE id IN ${sql.in(runIds)}`.pipe(
        Effect.asVoid,
        Effect.orDie
      )

  /** Fails unfinished runs whose process stopped beating (it crashed or was killed) `staleSeconds` ago. */
  const failAbandoned = (staleSeconds: number) =>
    sql<{ id: number }>`
      UPDATE agent_test_runs SET state = 'failed', ended_at = now(),
        error = 'The server holding this test run stopped before it finished; start it again'
      WHERE state IN ('queued', 'running') AND heartbeat_at < now() - ${`${staleSeconds} seconds`}::interval
      RETURNING id`.pipe(Effect.map((rows) => rows.length), Effect.orDie)

  /**
   * The stored draft's fingerprint: its definition, variables and configurations as PostgreSQL prints
   * them (jsonb prints keys in one canonical order); null without a draft.
   */
  const draftFingerprint = (agentId: number) =>
    sql<{ fingerprint: string }>`
      SELECT md5(workflow_definition::text || template_context_variables::text || workflow_configurations::text)
        AS fingerprint
      FROM workflow_definitions WHERE workflow_id = ${agentId} AND version_status = 'draft'`.pipe(
      Effect.map((rows) => rows[0]?.fingerprint ?? null),
      Effect.orDie
    )

  /** The agent's latest run on the draft, with its plan: what the publish gate reads. */
  const latestOnDraft = (agentId: number) =>
    sql<RunRow>`
      SELECT ${columns} FROM agent_test_runs
      WHERE workflow_id = ${agentId} AND request ->> 'version' = 'draft'
      ORDER BY id DESC LIMIT 1`.pipe(
      Effect.map((rows) => (rows[0] ? { run: toTestRun(rows[0]), plan: rows[0].request } : null)),
      Effect.orDie
    )

  return {
    insert,
    one,
    page,
    draftFingerprint,
    latestOnDraft,
    markRunning,
    addResult,
    finish,
    addTokens,
    endedCall,
    beat,
    failAbandoned
  }
})
