/**
 * Foundation figures: cold start to first served request (embedded PGlite with a fresh and with an
 * existing data dir; PostgreSQL when DATABASE_URL is set) and requests per second for
 * `GET /api/v2/status` with an API key. Loopback only, bounded in time.
 *
 *   npx tsx bench/foundation.ts                 # embedded
 *   DATABASE_URL=postgres://… npx tsx bench/foundation.ts
 */
import * as fs from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "../test/support/process.ts"

const admin = { email: "bench@example.test", password: "bench-password-1" }
const DURATION_MS = Number(process.env.BENCH_SECONDS ?? 10) * 1000
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 32)

const coldStart = async (env: Record<string, string>) => {
  const port = String(await freePort())
  const url = `http://127.0.0.1:${port}`
  const started = performance.now()
  const proc = spawnTalkgraph(["serve"], { ...env, PORT: port, ...adminEnv })
  await waitUntilServing(proc, url, 120_000)
  return { ms: performance.now() - started, proc, url }
}

const adminEnv = { TALKGRAPH_ADMIN_EMAIL: admin.email, TALKGRAPH_ADMIN_PASSWORD: admin.password }

const json = async (url: string, init: RequestInit) => (await fetch(url, init)).json() as Promise<any>

const throughput = async (url: string) => {
  const login = await json(`${url}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(admin)
  })
  const key = (await json(`${url}/api/v1/user/api-keys`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${login.token}` },
    body: JSON.stringify({ name: "bench" })
  })).api_key as string
  const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY })
  const target = new URL(`${url}/api/v2/status`)
  const once = () =>
    new Promise<number>((resolve, reject) => {
      const request = http.get(
        { host: target.hostname, port: target.port, path: target.pathname, agent, headers: { "x-api-key": key } },
        (response) => {
          response.resume()
          response.on("end", () => resolve(response.statusCode ?? 0))
        }
      )
      request.on("error", reject)
    })
  const latencies: Array<number> = []
  let failures = 0
  const deadline = performance.now() + DURATION_MS
  const worker = async () => {
    while (performance.now() < deadline) {
      const t0 = performance.now()
      const status = await once()
      latencies.push(performance.now() - t0)
      if (status !== 200) failures++
    }
  }
  const started = performance.now()
  await Promise.all(Array.from({ length: CONCURRENCY }, worker))
  const seconds = (performance.now() - started) / 1000
  agent.destroy()
  latencies.sort((a, b) => a - b)
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))]!.toFixed(2)
  return {
    rps: (latencies.length / seconds).toFixed(0),
    p50: pct(0.5),
    p99: pct(0.99),
    requests: latencies.length,
    failures
  }
}

const main = async () => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-"))
  const databaseUrl = process.env.DATABASE_URL
  const env: Record<string, string> = databaseUrl
    ? {
      DATABASE_URL: databaseUrl,
      TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123",
      TALKGRAPH_DATA_DIR: dataDir
    }
    : { TALKGRAPH_DATA_DIR: dataDir }
  const label = databaseUrl ? "PostgreSQL" : "embedded PGlite"
  try {
    const first = await coldStart(env)
    console.log(`${label}: cold start to first served request (new data) ${first.ms.toFixed(0)} ms`)
    await stop(first.proc)
    const second = await coldStart(env)
    console.log(`${label}: cold start to first served request (existing data) ${second.ms.toFixed(0)} ms`)
    const result = await throughput(second.url)
    console.log(
      `${label}: GET /api/v2/status with an API key, ${CONCURRENCY} connections, ${DURATION_MS / 1000} s: ` +
        `${result.rps} req/s, p50 ${result.p50} ms, p99 ${result.p99} ms, ${result.requests} requests, ${result.failures} non-200`
    )
    await stop(second.proc)
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

await main()
