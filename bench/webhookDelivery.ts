/**
 * Outgoing webhook delivery on PostgreSQL: runs end at a steady rate (each in its own statement,
 * as calls end), the outbox triggers write their events and deliveries, and one `talkgraph`
 * process's delivery worker signs and posts them to a loopback receiver. Prints the throughput
 * achieved at the receiver and the lag from each event (its commit time, the message's
 * `timestamp`) to its arrival, p50/p99, with lost and duplicated messages.
 * Usage: DATABASE_URL=postgres://postgres@127.0.0.1:5432/postgres npx tsx bench/webhookDelivery.ts
 *   BENCH_RATE=500 (runs ended per second)   BENCH_SECONDS=10   BENCH_CONCURRENCY=16 (TALKGRAPH_WEBHOOK_CONCURRENCY)
 */
import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { startInProcessServer } from "../test/support/inProcessServer.ts"
import { createOwnDatabase } from "../test/support/ownDatabase.ts"

const BASE = process.env.DATABASE_URL
if (!BASE) throw new Error("Set DATABASE_URL to a PostgreSQL server (a database is created for the run and dropped)")
const RATE = Number(process.env.BENCH_RATE ?? 500)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 10)
const TOTAL = RATE * SECONDS
const CONCURRENCY = process.env.BENCH_CONCURRENCY ?? "16"
const TICK_MS = 20

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!

const arrivals = new Map<string, Array<number>>()
const lags: Array<number> = []
const receiver = http.createServer((request, response) => {
  let body = ""
  request.setEncoding("utf8")
  request.on("data", (chunk: string) => (body += chunk))
  request.on("end", () => {
    const now = Date.now()
    const id = String(request.headers["webhook-id"])
    const seen = arrivals.get(id) ?? []
    seen.push(now)
    arrivals.set(id, seen)
    if (seen.length === 1) lags.push(now - Date.parse(JSON.parse(body).timestamp))
    response.writeHead(204).end()
  })
})
await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve))
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

const own = await createOwnDatabase(BASE)
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-webhooks-"))
const server = await startInProcessServer({
  DATABASE_URL: own.url,
  TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123456789",
  TALKGRAPH_DATA_DIR: dataDir,
  TALKGRAPH_SIGNUP: "true",
  LOG_LEVEL: "error",
  TALKGRAPH_WEBHOOK_CONCURRENCY: CONCURRENCY
})
const sql = <T>(run: (client: SqlClient.SqlClient) => Effect.Effect<T, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, run))

try {
  const signup = await fetch(`${server.url}/api/v1/auth/signup`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: "bench@example.test", password: "correct horse battery staple", name: "bench" })
  }).then((reply) => reply.json()) as { token: string; user: { organization_id: number } }
  const org = signup.user.organization_id
  const endpoint = await fetch(`${server.url}/api/v1/webhooks`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${signup.token}` },
    body: JSON.stringify({ url: receiverUrl, event_types: ["run.completed"] })
  })
  if (endpoint.status !== 200) throw new Error(`endpoint: ${endpoint.status} ${await endpoint.text()}`)
  const ids = await sql((client) =>
    Effect.gen(function*() {
      const [workflow] = yield* client<{ id: number }>`
        INSERT INTO workflows (organization_id, workflow_uuid, name) VALUES (${org}, gen_random_uuid(), 'bench')
        RETURNING id`
      return yield* client<{ id: number }>`
        INSERT INTO runs (organization_id, workflow_id, name, channel, mode, direction, transcript, gathered_context)
        SELECT ${org}, ${workflow!.id}, 'run-' || n, 'telephony', 'twilio', 'outbound',
               '[{"role":"assistant","text":"Hello! How can I help?"},{"role":"user","text":"Just checking in."}]'::jsonb,
               '{"interested":true}'::jsonb
        FROM generate_series(1, ${TOTAL}) n RETURNING id`
    })
  )
  console.log(
    `${TOTAL} runs end at ${RATE}/s for ${SECONDS} s; one process delivers (concurrency ${CONCURRENCY}, poll 250 ms)`
  )

  // Ends runs on schedule: each tick ends what is due by now, each run in its own statement.
  const started = Date.now()
  let ended = 0
  while (ended < TOTAL) {
    const due = Math.min(TOTAL, Math.floor(((Date.now() - started) / 1000) * RATE))
    const batch = ids.slice(ended, due)
    ended = due
    await Promise.all(
      batch.map(({ id }) =>
        sql((client) =>
          client`UPDATE runs SET state = 'completed', ended_at = now(), duration_seconds = 42 WHERE id = ${id}`
        )
      )
    )
    await sleep(TICK_MS)
  }
  const endedIn = (Date.now() - started) / 1000
  const deadline = Date.now() + 120_000
  while (arrivals.size < TOTAL && Date.now() < deadline) await sleep(100)
  const last = Math.max(...Array.from(arrivals.values(), (times) => times[0]!))
  const sorted = [...lags].sort((a, b) => a - b)
  const duplicates = Array.from(arrivals.values()).filter((times) => times.length > 1).length
  console.log(`runs ended: ${TOTAL} in ${endedIn.toFixed(1)} s (${(TOTAL / endedIn).toFixed(0)}/s)`)
  console.log(`delivered: ${arrivals.size}/${TOTAL}, duplicates ${duplicates}, lost ${TOTAL - arrivals.size}`)
  console.log(`receiver throughput: ${(arrivals.size / ((last - started) / 1000)).toFixed(0)} messages/s`)
  console.log(
    `lag event → receiver: p50 ${percentile(sorted, 50)} ms, p99 ${percentile(sorted, 99)} ms, max ${sorted.at(-1)} ms`
  )
} finally {
  await server.close()
  receiver.close()
  await own.drop()
  await fs.rm(dataDir, { recursive: true, force: true })
}
