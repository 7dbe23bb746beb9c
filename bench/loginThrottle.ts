/**
 * Login throttle under a burst, against a real `talkgraph serve` on loopback:
 *
 * 1. one account: BURST wrong passwords fired at once. Prints how many had their password checked
 *    (answered 401) before the lock engaged (the rest answered 429 unchecked), and what the right
 *    password gets right after;
 * 2. many accounts: BURST logins for as many different (unknown) emails at once, each of which is
 *    checked (against a decoy hash), as credential stuffing would.
 *
 * During each burst, `GET /api/v1/health` and `GET /api/v2/status` with an API key are sent one
 * after the other and their latency is reported beside an idle baseline. Every request opens its
 * own connection, so latencies include the connect.
 *
 *   npx tsx bench/loginThrottle.ts                 # embedded
 *   DATABASE_URL=postgres://… npx tsx bench/loginThrottle.ts
 */
import * as fs from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "../test/support/process.ts"

const BURST = Number(process.env.BENCH_BURST ?? 250)

let resent = 0

/**
 * One request on a connection of its own (no kept-alive socket the server may close as it is
 * reused). Sent again, up to three times, when the connection fails before an answer, as a client
 * would when hundreds of connects arrive at once on a loaded machine; the resends are counted.
 */
const request = (
  method: string,
  url: string,
  body?: unknown,
  headers: Record<string, string> = {},
  tries = 0
): Promise<{ status: number; body: any }> =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const outgoing = http.request(url, {
      method,
      agent: false,
      headers: {
        ...(payload ? { "content-type": "application/json", "content-length": Buffer.byteLength(payload) } : {}),
        ...headers
      }
    }, (response) => {
      let text = ""
      response.setEncoding("utf8").on("data", (chunk) => (text += chunk)).on("end", () => {
        let parsed: unknown
        try {
          parsed = JSON.parse(text)
        } catch {
          parsed = undefined
        }
        resolve({ status: response.statusCode ?? 0, body: parsed })
      })
    })
    outgoing.on("error", reject)
    outgoing.end(payload)
  }).catch(async (error) => {
    if (tries >= 3) throw error
    resent++
    await new Promise((resolve) => setTimeout(resolve, 50 * (tries + 1)))
    return request(method, url, body, headers, tries + 1)
  })

const post = (url: string, body: unknown, headers: Record<string, string> = {}) => request("POST", url, body, headers)

const percentile = (values: ReadonlyArray<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!
}

const describeLatencies = (values: ReadonlyArray<number>) =>
  `p50 ${percentile(values, 0.5).toFixed(1)} ms, p99 ${percentile(values, 0.99).toFixed(1)} ms, max ${
    Math.max(...values).toFixed(1)
  } ms (${values.length} requests)`

/** Sends `GET path` one after the other until `until` settles, returning each request's latency. */
const probe = async (url: string, headers: Record<string, string>, until: Promise<unknown>) => {
  let done = false
  void until.finally(() => (done = true))
  const latencies: Array<number> = []
  do {
    const started = performance.now()
    const reply = await request("GET", url, undefined, headers)
    if (reply.status !== 200) throw new Error(`${url} answered ${reply.status}`)
    latencies.push(performance.now() - started)
  } while (!done)
  return latencies
}

const idleBaseline = async (url: string, headers: Record<string, string>) => {
  const latencies: Array<number> = []
  for (let i = 0; i < 50; i++) {
    const started = performance.now()
    await request("GET", url, undefined, headers)
    latencies.push(performance.now() - started)
  }
  return latencies
}

const countStatuses = (statuses: ReadonlyArray<number>) =>
  Object.entries(statuses.reduce<Record<number, number>>((counts, s) => ({ ...counts, [s]: (counts[s] ?? 0) + 1 }), {}))
    .map(([status, count]) => `${count}× ${status}`)
    .join(", ")

const main = async () => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-"))
  const databaseUrl = process.env.DATABASE_URL
  const port = String(await freePort())
  const url = `http://127.0.0.1:${port}`
  const label = databaseUrl ? "PostgreSQL" : "embedded PGlite"
  const proc = spawnTalkgraph(["serve"], {
    TALKGRAPH_DATA_DIR: dataDir,
    PORT: port,
    TALKGRAPH_SIGNUP: "true",
    ...(databaseUrl
      ? { DATABASE_URL: databaseUrl, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123" }
      : {})
  })
  try {
    await waitUntilServing(proc, url, 120_000)
    // Its own account: on a PostgreSQL database that has users, no first-start admin is created.
    const owner = await post(`${url}/api/v1/auth/signup`, {
      email: `bench-${Date.now()}@example.test`,
      password: "bench-password-1"
    })
    const key =
      (await post(`${url}/api/v1/user/api-keys`, { name: "bench" }, { authorization: `Bearer ${owner.body.token}` }))
        .body.api_key
    if (typeof key !== "string") throw new Error(`could not create an API key: ${JSON.stringify(owner.body)}`)
    const health = { url: `${url}/api/v1/health`, headers: {} }
    const status = { url: `${url}/api/v2/status`, headers: { "x-api-key": key } }
    console.log(`${label}, ${os.availableParallelism()} cores, bursts of ${BURST} concurrent logins`)
    console.log(`  idle: GET /api/v1/health ${describeLatencies(await idleBaseline(health.url, health.headers))}`)
    console.log(
      `  idle: GET /api/v2/status (API key) ${describeLatencies(await idleBaseline(status.url, status.headers))}`
    )

    const victim = { email: `victim-${Date.now()}@example.test`, password: "victim-password-1" }
    await post(`${url}/api/v1/auth/signup`, victim)
    const started = performance.now()
    const guesses = Promise.all(
      Array.from(
        { length: BURST },
        (_, i) => post(`${url}/api/v1/auth/login`, { email: victim.email, password: `guess-${i}` })
      )
    )
    const [replies, healthDuring, statusDuring] = await Promise.all([
      guesses,
      probe(health.url, health.headers, guesses),
      probe(status.url, status.headers, guesses)
    ])
    const elapsed = performance.now() - started
    const checked = replies.filter((reply) => reply.status === 401).length
    const right = await post(`${url}/api/v1/auth/login`, victim)
    console.log(
      `  one account, ${BURST} wrong passwords at once (${elapsed.toFixed(0)} ms): ${
        countStatuses(replies.map((r) => r.status))
      }`
    )
    console.log(`    passwords checked before the lock engaged: ${checked}; the right password then: ${right.status}`)
    console.log(`    during the burst: GET /api/v1/health ${describeLatencies(healthDuring)}`)
    console.log(`    during the burst: GET /api/v2/status (API key) ${describeLatencies(statusDuring)}`)

    const stuffingStarted = performance.now()
    const stuffing = Promise.all(
      Array.from(
        { length: BURST },
        (_, i) =>
          post(`${url}/api/v1/auth/login`, { email: `nobody-${i}-${Date.now()}@example.test`, password: "guess" })
      )
    )
    const [stuffed, healthStuffing, statusStuffing] = await Promise.all([
      stuffing,
      probe(health.url, health.headers, stuffing),
      probe(status.url, status.headers, stuffing)
    ])
    const stuffingMs = performance.now() - stuffingStarted
    console.log(
      `  ${BURST} different accounts at once (${stuffingMs.toFixed(0)} ms): ${
        countStatuses(stuffed.map((r) => r.status))
      }`
    )
    console.log(`    during the burst: GET /api/v1/health ${describeLatencies(healthStuffing)}`)
    console.log(`    during the burst: GET /api/v2/status (API key) ${describeLatencies(statusStuffing)}`)
    console.log(`  logins sent again after a failed connection: ${resent}`)
  } catch (error) {
    console.error(
      `the benchmark failed; the server (exit ${proc.child.exitCode}, signal ${proc.child.signalCode}) said:\n${
        proc.output().slice(-4000)
      }`
    )
    throw error
  } finally {
    await stop(proc)
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

await main()
