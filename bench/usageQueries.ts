/**
 * Usage report latency at scale: seeds runs across 2 organizations and 50 agents, then times the
 * report over HTTP for each kind of query and prints p50/p95 and the slowest query's plan.
 *
 *   DATABASE_URL=postgres://postgres@127.0.0.1:5432/usage_bench npx tsx bench/usageQueries.ts
 *   npx tsx bench/usageQueries.ts                      # embedded PGlite, 100,000 runs by default
 *
 * BENCH_RUNS overrides the number of runs; BENCH_ITERATIONS the timed requests per named query;
 * BENCH_SWEEP_ITERATIONS those per combination in the sweep over every combination of the nine
 * documented filters (511, over all time and over the last 30 days; 0 skips the sweep).
 * Against PostgreSQL the seed is kept and reused by later runs of the same size.
 */
import { SqlClient } from "@effect/sql"
import { Effect, Either } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { rebuildRunDailyUsage } from "../layers/db/migrations/0006_usage_indexes.ts"
import { rebuildRunMonthlyUsage } from "../layers/db/migrations/0018_performance_indexes.ts"
import { reportTotals, runsPage } from "../layers/usage/reportQueries.ts"
import { Identity } from "../services/Identity.ts"
import { createdWindow, parseDateBound } from "../src/usage/dates.ts"
import { parseUsageFilters } from "../src/usage/filters.ts"
import { startInProcessServer } from "../test/support/inProcessServer.ts"
import { eventLoopLag } from "./support/eventLoopLag.ts"
import { databaseName, reportFigures } from "./support/figures.ts"

const databaseUrl = process.env.DATABASE_URL
const RUNS = Number(process.env.BENCH_RUNS ?? (databaseUrl ? 1_000_000 : 100_000))
const ITERATIONS = Number(process.env.BENCH_ITERATIONS ?? 40)
/** Requests per combination in the sweep over every combination of filters (0 skips it). */
const SWEEP_ITERATIONS = Number(process.env.BENCH_SWEEP_ITERATIONS ?? 10)
const TARGET_MS = 50
const WARMUP = 3
const WORKFLOWS = 50
const CAMPAIGNS = 200
const SEED_BATCH = 100_000
const ORGANIZATIONS = ["usage-bench-a", "usage-bench-b"] as const

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-"))
const settings: Record<string, string> = {
  TALKGRAPH_DATA_DIR: dataDir,
  LOG_LEVEL: "error",
  TALKGRAPH_ADMIN_EMAIL: "bench-admin@example.test",
  TALKGRAPH_ADMIN_PASSWORD: "bench-admin-password",
  ...(databaseUrl
    ? { DATABASE_URL: databaseUrl, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123456789" }
    : {})
}
const server = await startInProcessServer(settings)
const { run } = server
const baseUrl = server.url

const organizationIds = await run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const ids: Array<number> = []
  for (const name of ORGANIZATIONS) {
    const [found] = yield* sql<{ id: number }>`SELECT id FROM organizations WHERE name = ${name}`
    ids.push(
      found?.id ?? (yield* sql<{ id: number }>`INSERT INTO organizations (name) VALUES (${name}) RETURNING id`)[0]!.id
    )
  }
  return ids as [number, number]
}))

/**
 * Secondary indexes are dropped during the bulk insert and rebuilt from their own definitions, and
 * the daily and monthly rollups are rebuilt once instead of row by row: how one loads a million rows. The
 * measured schema is exactly what migrations create.
 */
const seed = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [{ count } = { count: 0 }] = yield* sql<{ count: number }>`
    SELECT count(*) AS count FROM runs WHERE organization_id IN ${sql.in(organizationIds)}`
  if (count === RUNS) return false
  yield* sql`DELETE FROM runs WHERE organization_id IN ${sql.in(organizationIds)}`
  yield* sql`DELETE FROM campaigns WHERE organization_id IN ${sql.in(organizationIds)}`
  yield* sql`DELETE FROM workflows WHERE organization_id IN ${sql.in(organizationIds)}`
  yield* sql`
    INSERT INTO workflows (organization_id, workflow_uuid, name)
    SELECT CASE WHEN g % 2 = 0 THEN ${organizationIds[0]}::bigint ELSE ${organizationIds[1]}::bigint END,
           gen_random_uuid(), 'Bench agent ' || g
    FROM generate_series(1, ${WORKFLOWS}) g`
  yield* sql`
    INSERT INTO campaigns (organization_id, workflow_id, name, source_type, source_id, retry_config, circuit_breaker)
    SELECT w.organization_id, w.id, 'Bench campaign ' || g, 'csv', 'bench.csv', '{}', '{}'
    FROM generate_series(1, ${CAMPAIGNS}) g
    JOIN LATERAL (SELECT id, organization_id FROM workflows WHERE organization_id IN ${sql.in(organizationIds)}
                  ORDER BY id OFFSET (g % ${WORKFLOWS}) LIMIT 1) w ON true`
  const indexes = yield* sql<{ name: string; definition: string }>`
    SELECT i.indexrelid::regclass::text AS name, pg_get_indexdef(i.indexrelid) AS definition
    FROM pg_index i WHERE i.indrelid = 'runs'::regclass AND NOT i.indisprimary AND NOT i.indisunique`
  for (const index of indexes) yield* sql.unsafe(`DROP INDEX ${index.name}`)
  yield* sql`ALTER TABLE runs DISABLE TRIGGER runs_daily_usage`
  for (let first = 1; first <= RUNS; first += SEED_BATCH) {
    const last = Math.min(RUNS, first + SEED_BATCH - 1)
    // Run g belongs to workflow g % 50 (and that workflow's organization); a third of runs are in
    // one of the workflow's campaigns; creation times spread over the past year.
    yield* sql`
      WITH w AS (SELECT array_agg(id ORDER BY id) AS ids, array_agg(organization_id ORDER BY id) AS orgs
                 FROM workflows WHERE organization_id IN ${sql.in(organizationIds)}),
           c AS (SELECT workflow_id, array_agg(id ORDER BY id) AS ids FROM campaigns
                 WHERE organization_id IN ${sql.in(organizationIds)} GROUP BY workflow_id)
      INSERT INTO runs (organization_id, workflow_id, name, channel, mode, direction, state, caller_number,
                        called_number, campaign_id, disposition, prompt_tokens, completion_tokens, service_tokens,
                        duration_seconds, recording_key, created_at)
      SELECT w.orgs[g % ${WORKFLOWS} + 1], w.ids[g % ${WORKFLOWS} + 1], 'run-' || g,
             CASE (g / 7) % 6 WHEN 4 THEN 'web' WHEN 5 THEN 'chat' ELSE 'telephony' END,
             (ARRAY['twilio', 'vonage', 'telnyx', 'plivo', 'webrtc', 'textchat'])[(g / 7) % 6 + 1],
             CASE WHEN (g / 5) % 3 = 0 THEN 'inbound' ELSE 'outbound' END,
             'completed',
             '+1' || lpad(((g::bigint * 7919) % 10000000000)::text, 10, '0'),
             '+44' || lpad(((g::bigint * 104729) % 10000000000)::text, 10, '0'),
             CASE WHEN (g / 11) % 10 < 3 THEN c.ids[(g / 50) % array_length(c.ids, 1) + 1] END,
             (ARRAY['interested', 'not_interested', 'voicemail', 'busy', 'no_answer', 'callback', 'wrong_number', NULL])[(g / 3) % 8 + 1],
             (g::bigint * 37) % 3000, (g::bigint * 11) % 2000, (g::bigint * 37) % 3000 + (g::bigint * 11) % 2000,
             (g * 13) % 900,
             CASE WHEN g % 4 = 0 THEN 'recordings/' || g || '.wav' END,
             now() - ((g::bigint * 7919) % 31536000) * interval '1 second' - (g % 1000) * interval '1 microsecond'
      FROM generate_series(${first}::integer, ${last}::integer) g
      CROSS JOIN w
      LEFT JOIN c ON c.workflow_id = w.ids[g % ${WORKFLOWS} + 1]`
    console.log(`  seeded ${last.toLocaleString()} runs`)
  }
  for (const index of indexes) yield* sql.unsafe(index.definition)
  yield* sql`ALTER TABLE runs ENABLE TRIGGER runs_daily_usage`
  yield* rebuildRunDailyUsage
  yield* rebuildRunMonthlyUsage
  yield* sql`VACUUM ANALYZE runs`
  yield* sql`VACUUM ANALYZE run_daily_usage`
  yield* sql`VACUUM ANALYZE run_monthly_usage`
  return true
})

const seedStarted = performance.now()
console.log(
  `usage report benchmark on ${
    databaseUrl ? "PostgreSQL" : "PGlite"
  }: ${RUNS.toLocaleString()} runs, 2 organizations, ${WORKFLOWS} agents`
)
const seeded = await run(seed)
console.log(
  seeded ? `seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s` : "reusing the existing seed"
)
// Statistics as autovacuum keeps them on a live database (a reused seed may predate a migration's table).
await run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql`ANALYZE runs, run_daily_usage, run_monthly_usage`))

/** A member of the first organization, signed in through the API like any user. */
const token = await run(Effect.gen(function*() {
  const identity = yield* Identity
  const email = `bench-${crypto.randomUUID().slice(0, 8)}@example.test`
  yield* identity.createUser({
    email,
    password: "bench-password-123",
    name: "bench",
    organizationId: organizationIds[0]
  })
  return email
})).then(async (email) => {
  const reply = await fetch(`${baseUrl}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "bench-password-123" })
  })
  return ((await reply.json()) as { token: string }).token
})

const [aWorkflow, aCampaign, aRun] = await run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [workflow] = yield* sql<{ id: number }>`SELECT id FROM workflows WHERE organization_id = ${
    organizationIds[0]
  } ORDER BY id LIMIT 1`
  const [campaign] = yield* sql<{ id: number }>`SELECT id FROM campaigns WHERE organization_id = ${
    organizationIds[0]
  } ORDER BY id LIMIT 1`
  const [someRun] = yield* sql<{ id: number }>`
    SELECT id FROM runs WHERE organization_id = ${organizationIds[0]} ORDER BY created_at DESC LIMIT 1 OFFSET 1000`
  return [workflow!.id, campaign!.id, someRun!.id]
}))

const filter = (attribute: string, type: string, value: unknown) => ({ attribute, type, value })
const documented = {
  runId: filter("runId", "number", { value: aRun }),
  workflowId: filter("workflowId", "number", { value: aWorkflow }),
  campaignId: filter("campaignId", "number", { value: aCampaign }),
  callerNumber: filter("callerNumber", "text", { value: "55501" }),
  calledNumber: filter("calledNumber", "text", { value: "+44123" }),
  dispositionCode: filter("dispositionCode", "multiSelect", { codes: ["interested", "callback"] }),
  // Wide: nearly every run, the case no index narrows.
  duration: filter("duration", "numberRange", { min: 30, max: null }),
  callDirection: filter("callDirection", "radio", { status: "outbound" }),
  callChannel: filter("callChannel", "radio", { status: "telephony" })
}
const narrowDuration = filter("duration", "numberRange", { min: 60, max: 120 })
const last30Days = new Date(Date.now() - 30 * 86_400_000).toISOString()
const cases: Array<[string, Record<string, unknown>]> = [
  ["no filter", {}],
  ["runId", { filters: [documented.runId] }],
  ["workflowId", { filters: [documented.workflowId] }],
  ["campaignId", { filters: [documented.campaignId] }],
  ["callerNumber (substring)", { filters: [documented.callerNumber] }],
  ["calledNumber (substring)", { filters: [documented.calledNumber] }],
  ["dispositionCode (2 codes)", { filters: [documented.dispositionCode] }],
  ["duration 60-120 s", { filters: [narrowDuration] }],
  ["duration >= 30 s", { filters: [documented.duration] }],
  ["callDirection outbound", { filters: [documented.callDirection] }],
  ["callChannel web", { filters: [filter("callChannel", "radio", { status: "web" })] }],
  ["direction+channel+disp.", {
    filters: [
      documented.callDirection,
      documented.callChannel,
      filter("dispositionCode", "multiSelect", {
        codes: ["voicemail"]
      })
    ]
  }],
  // The combinations the daily rollup cannot answer: duration with anything, an agent or a
  // campaign with another filter.
  ["disp.+duration+direction", { filters: [documented.dispositionCode, narrowDuration, documented.callDirection] }],
  ["disp.+duration>=30+dir.", {
    filters: [documented.dispositionCode, documented.duration, documented.callDirection]
  }],
  ["duration>=30+direction", { filters: [documented.duration, documented.callDirection] }],
  ["duration>=30+channel", { filters: [documented.duration, documented.callChannel] }],
  ["workflow+direction", { filters: [documented.workflowId, documented.callDirection] }],
  ["workflow+duration>=30", { filters: [documented.workflowId, documented.duration] }],
  ["campaign+disp.+duration", { filters: [documented.campaignId, documented.dispositionCode, narrowDuration] }],
  ["caller+duration>=30", { filters: [documented.callerNumber, documented.duration] }],
  ["dur.+dir.+chan.+disp. 30 d", {
    start_date: last30Days,
    filters: [documented.duration, documented.callDirection, documented.callChannel, documented.dispositionCode]
  }],
  ["last 30 days", { start_date: last30Days }],
  ["sort by duration", { sort_by: "duration", sort_order: "desc" }],
  ["dur.>=30+dir. by duration", {
    filters: [documented.duration, documented.callDirection],
    sort_by: "duration",
    sort_order: "asc"
  }],
  ["page 1000", { page: 1000, limit: 50 }]
]

const queryString = (query: Record<string, unknown>) =>
  new URLSearchParams(
    Object.entries(query).map((
      [key, value]
    ): [string, string] => [key, typeof value === "object" ? JSON.stringify(value) : String(value)])
  )

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]!

/** Times one query over HTTP: `iterations` requests after the warm-up ones. */
const timeQuery = async (name: string, query: Record<string, unknown>, iterations: number) => {
  const url = `${baseUrl}/api/v1/organizations/usage/runs?${queryString(query)}`
  const timings: Array<number> = []
  let count = 0
  for (let i = 0; i < WARMUP + iterations; i++) {
    if (i === WARMUP) loopLag.reset()
    const started = performance.now()
    const reply = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
    const body = (await reply.json()) as { total_count: number }
    if (reply.status !== 200) throw new Error(`${name}: ${reply.status} ${JSON.stringify(body)}`)
    if (i >= WARMUP) timings.push(performance.now() - started)
    count = body.total_count
  }
  timings.sort((a, b) => a - b)
  return { name, query, p50: percentile(timings, 50), p95: percentile(timings, 95), count }
}

/**
 * The report's two statements for a query, as the server runs them, under EXPLAIN: with ANALYZE
 * alone, the database's own execution time, which a busy machine inflates far less than a
 * request's (the sweep prints both).
 */
const explained = (query: Record<string, unknown>, explain: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const url = new URL(`http://x/?${queryString(query)}`)
    const start = url.searchParams.get("start_date")
    const selection = {
      organizationId: organizationIds[0],
      window: createdWindow(start ? Either.getOrThrow(parseDateBound(start)) : undefined, undefined),
      filters: Either.getOrThrow(parseUsageFilters(url.searchParams.get("filters") ?? ""))
    }
    const ordering = {
      sortBy: url.searchParams.get("sort_by") === "duration" ? "duration" as const : "created_at" as const,
      sortOrder: url.searchParams.get("sort_order") === "asc" ? "asc" as const : "desc" as const
    }
    const page = Number(url.searchParams.get("page") ?? 1)
    const limit = Number(url.searchParams.get("limit") ?? 50)
    const run = (statement: ReturnType<typeof reportTotals> | ReturnType<typeof runsPage>) =>
      sql<Record<string, string>>`${sql.literal(explain)} ${statement}`
    return [
      yield* run(reportTotals(sql, selection)),
      yield* run(runsPage(sql, selection, ordering, limit, (page - 1) * limit))
    ]
  })

/** Milliseconds the database spent on both statements (EXPLAIN ANALYZE's execution times). */
const databaseMs = (query: Record<string, unknown>) =>
  run(explained(query, "EXPLAIN (ANALYZE, TIMING OFF)")).then((statements) =>
    statements.reduce((sum, rows) => {
      const line = rows.map((row) => Object.values(row)[0]).find((text) => text?.startsWith("Execution Time"))
      return sum + Number(line?.match(/([\d.]+) ms/)?.[1] ?? 0)
    }, 0)
  )

const loopLag = eventLoopLag()
const results: Array<{ name: string; query: Record<string, unknown>; p50: number; p95: number; count: number }> = []
console.log(`\n${"query".padEnd(28)}${"p50 ms".padStart(9)}${"p95 ms".padStart(9)}${"matching runs".padStart(15)}`)
for (const [name, query] of cases) {
  const result = await timeQuery(name, query, ITERATIONS)
  results.push(result)
  console.log(
    `${name.padEnd(28)}${result.p50.toFixed(1).padStart(9)}${result.p95.toFixed(1).padStart(9)}${
      result.count.toLocaleString().padStart(15)
    }`
  )
}
const namedLag = loopLag.figures()

/**
 * Every combination of the nine documented filters (511, each filter with the value above), over
 * the whole history and over the last 30 days: the worst p95 is the figure the issue asks about.
 */
const sweep: Array<Awaited<ReturnType<typeof timeQuery>> & { readonly databaseMs: number }> = []
if (SWEEP_ITERATIONS > 0) {
  const names = Object.keys(documented) as Array<keyof typeof documented>
  for (const window of [undefined, last30Days]) {
    for (let mask = 1; mask < 1 << names.length; mask++) {
      const chosen = names.filter((_, at) => mask & (1 << at))
      const query = { filters: chosen.map((name) => documented[name]), ...(window ? { start_date: window } : {}) }
      const timed = await timeQuery(`${chosen.join("+")}${window ? " (30 d)" : ""}`, query, SWEEP_ITERATIONS)
      sweep.push({ ...timed, databaseMs: await databaseMs(query) })
    }
  }
  sweep.sort((a, b) => b.p95 - a.p95)
  const over = sweep.filter((result) => result.p95 > TARGET_MS)
  console.log(
    `\nevery combination (${sweep.length}, ${SWEEP_ITERATIONS} requests each): ${over.length} over ${TARGET_MS} ms p95; slowest:`
  )
  const line = (result: (typeof sweep)[number]) =>
    `  ${result.p95.toFixed(1).padStart(7)} ms p95  ${result.databaseMs.toFixed(1).padStart(6)} ms in the database  ${
      result.count.toLocaleString().padStart(9)
    } runs  ${result.name}`
  for (const result of sweep.slice(0, 8)) console.log(line(result))
  console.log("slowest in the database (both statements' execution time, EXPLAIN ANALYZE):")
  for (const result of [...sweep].sort((a, b) => b.databaseMs - a.databaseMs).slice(0, 8)) console.log(line(result))
}

// By median: on a shared machine a single stalled request decides the p95 of a fast query.
const slowest = [...results, ...sweep].reduce((worst, result) => (result.p50 > worst.p50 ? result : worst))
console.log(
  `\nslowest: ${slowest.name} (p50 ${slowest.p50.toFixed(1)} ms, p95 ${slowest.p95.toFixed(1)} ms; load average ${
    os.loadavg()[0]!.toFixed(1)
  } on ${os.cpus().length} cores); EXPLAIN ANALYZE of its two statements:`
)
const plans = await run(explained(slowest.query, "EXPLAIN (ANALYZE, BUFFERS)")).then((statements) =>
  statements.map((rows) => rows.map((row) => Object.values(row)[0]).join("\n"))
)
console.log(`\n-- totals\n${plans[0]}\n\n-- page\n${plans[1]}`)

const serverVersion = await run(Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [row] = yield* sql<{ version: string }>`SHOW server_version`
  return row?.version
}))
const worst = (list: ReadonlyArray<{ readonly p95: number }>) => Math.max(...list.map((result) => result.p95))
reportFigures(`usage report, ${RUNS.toLocaleString()} runs`, databaseName(databaseUrl, serverVersion), [
  ...results.map((result) => ({
    name: `${result.name} p95`,
    value: Number(result.p95.toFixed(1)),
    unit: "ms",
    target: `<= ${TARGET_MS}`
  })),
  ...(sweep.length > 0
    ? [
      {
        name: `every combination (${sweep.length}): worst p95`,
        value: Number(worst(sweep).toFixed(1)),
        unit: "ms",
        target: `<= ${TARGET_MS}`
      },
      {
        name: "combinations over the target",
        value: sweep.filter((result) => result.p95 > TARGET_MS).length,
        unit: "",
        target: "<= 0"
      },
      {
        name: "every combination: worst database time",
        value: Number(Math.max(...sweep.map((result) => result.databaseMs)).toFixed(1)),
        unit: "ms"
      },
      { name: "load average (1 min) at the end", value: Number(os.loadavg()[0]!.toFixed(1)), unit: "" }
    ]
    : []),
  { name: "event-loop delay p99 (named queries)", value: namedLag.p99_ms, unit: "ms" }
])

await server.close()
await fs.rm(dataDir, { recursive: true, force: true })
