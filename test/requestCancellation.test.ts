import { SqlClient } from "@effect/sql"
import { Duration, Effect, Exit, Fiber } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { databaseKind } from "./support/database.ts"
import { insertWorkflow } from "./support/runRows.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer({}, { ownDatabase: true })
  api = client(server.url)
})
afterAll(() => server?.close())

/** Connections in the server's pool: 20 on PostgreSQL, 1 on the embedded database. */
const poolSize = databaseKind() === "postgres" ? 20 : 1

const sleepingStatement = (seconds: number, label: string) =>
  Effect.flatMap(
    SqlClient.SqlClient,
    (sql) => sql<{ label: string }>`SELECT pg_sleep(${seconds}), ${label}::text AS label`
  )

const millisSince = (started: number) => performance.now() - started

/** Runs written in one statement, enough that a usage report takes a while to read. */
const seedRuns = (organizationId: number, workflowId: number, count: number) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`
      INSERT INTO runs (organization_id, workflow_id, name, mode, channel, direction, state, caller_number, called_number,
                        duration_seconds, service_tokens, created_at)
      SELECT ${organizationId}, ${workflowId}, 'run-' || g, 'twilio', 'telephony', 'outbound', 'completed',
             '+1555' || lpad((g % 10000)::text, 7, '0'), '+1666' || lpad((g % 9000)::text, 7, '0'), g % 600, g % 1000,
             timestamptz '2024-05-01' + g * interval '1 minute'
      FROM generate_series(1, ${count}) g`
  }))

const usageRuns =
  "/api/v1/organizations/usage/runs?start_date=2024-01-01&end_date=2025-01-01&sort_by=duration&limit=100" +
  `&filters=${
    encodeURIComponent(JSON.stringify([{ attribute: "callerNumber", type: "text", value: { value: "555000" } }]))
  }`

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** A client that gives up on each of its requests after a few milliseconds, over and over. */
const abandonRequests = async (account: TestAccount, until: number) => {
  let abandoned = 0
  while (Date.now() < until) {
    const controller = new AbortController()
    const request = fetch(`${server.url}${usageRuns}`, {
      headers: { authorization: `Bearer ${account.token}` },
      signal: controller.signal
    })
      .then((response) => response.arrayBuffer())
      .catch(() => undefined)
    await sleep(2 + Math.random() * 30)
    controller.abort()
    abandoned++
    await request
  }
  return abandoned
}

/** Another organization's client reading its usage meanwhile: the statuses it got. */
const readPatiently = async (account: TestAccount, until: number) => {
  const statuses: Array<number | string> = []
  while (Date.now() < until) {
    statuses.push(
      await api.get(usageRuns, { token: account.token }).then(
        (reply) => reply.status,
        (error) => String(error.cause ?? error)
      )
    )
  }
  return statuses
}

describe(`request cancellation on ${databaseKind()}`, () => {
  it("cancels only the interrupted statement, never the one that runs next on its connection", async () => {
    const outcome = await server.run(Effect.gen(function*() {
      const started = performance.now()
      // The interrupted request's statement, then every other connection busy, then another
      // request waiting for a connection: it gets the interrupted request's connection next.
      const interrupted = yield* Effect.fork(sleepingStatement(1.5, "interrupted"))
      yield* Effect.sleep(Duration.millis(100))
      const busy = yield* Effect.forEach(
        Array.from({ length: poolSize - 1 }),
        () => Effect.fork(sleepingStatement(1.9, "busy")),
        { concurrency: "unbounded" }
      )
      yield* Effect.sleep(Duration.millis(100))
      const next = yield* Effect.fork(sleepingStatement(1.0, "next"))
      yield* Effect.sleep(Duration.millis(100))
      yield* Fiber.interruptFork(interrupted)
      const nextExit = yield* Fiber.await(next)
      const nextDone = millisSince(started)
      yield* Fiber.joinAll(busy)
      return { nextExit, nextDone }
    }))
    expect(Exit.isSuccess(outcome.nextExit), String(Exit.isFailure(outcome.nextExit) ? outcome.nextExit.cause : ""))
      .toBe(true)
    if (databaseKind() === "postgres") {
      // Its connection was free once the interrupted statement was cancelled (at 0.3 s), not when
      // that statement would have ended (1.5 s): done by 1.3 s rather than 2.5 s.
      expect(outcome.nextDone).toBeLessThan(2000)
    }
  })

  it("an interrupted transaction's statement holds up no other request beyond its own end", async () => {
    const outcome = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const transaction = yield* Effect.fork(
        sql.withTransaction(Effect.zipRight(sql`SELECT 1`, sleepingStatement(0.8, "in transaction")))
      )
      yield* Effect.sleep(Duration.millis(200))
      yield* Fiber.interruptFork(transaction)
      const started = performance.now()
      const [other] = yield* sql<{ one: number }>`SELECT 1 AS one`
      const otherMs = millisSince(started)
      yield* Fiber.await(transaction)
      // The connection went back clean: no transaction left open on it.
      const after = yield* Effect.forEach(
        Array.from({ length: poolSize }),
        () => sql<{ open: boolean }>`SELECT now() <> statement_timestamp() AS open`,
        { concurrency: "unbounded" }
      )
      return { other, otherMs, after: after.flat() }
    }))
    expect(outcome.other).toEqual({ one: 1 })
    // PostgreSQL cancels the statement at once; the embedded database finishes it (0.6 s more).
    expect(outcome.otherMs).toBeLessThan(databaseKind() === "postgres" ? 400 : 1500)
    expect(outcome.after.every((row) => !row.open)).toBe(true)
  })

  it(
    "clients aborting many requests mid-query never fail another organization's requests",
    { timeout: 120_000 },
    async () => {
      const aborter = await newAccount(api, "aborter")
      const bystander = await newAccount(api, "bystander")
      await seedRuns(aborter.organizationId, await insertWorkflow(server, aborter.organizationId), 3_000)
      await seedRuns(bystander.organizationId, await insertWorkflow(server, bystander.organizationId), 3_000)
      // More readers than the pool has connections, so statements wait for one and reuse it at once.
      const until = Date.now() + 4_000
      const [abandoned, statuses] = await Promise.all([
        Promise.all(Array.from({ length: 6 }, () => abandonRequests(aborter, until))),
        Promise.all(Array.from({ length: poolSize + 4 }, () => readPatiently(bystander, until)))
      ])
      const replies = statuses.flat()
      const failures = replies.filter((status) => status !== 200)
      expect(abandoned.reduce((sum, count) => sum + count, 0)).toBeGreaterThan(100)
      expect(failures, `${failures.length} of ${replies.length} requests failed`).toEqual([])
    }
  )
})
