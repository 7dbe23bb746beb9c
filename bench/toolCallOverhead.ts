/**
 * Tool-call overhead: talkgraph's own time around an HTTP tool's request, at 1 and at 200
 * concurrent conversations each calling a tool. The tool runner (arguments checked against the
 * JSON Schema, presets and URL template rendered, credential looked up, decrypted and checked
 * against its bound host, outbound policy, answer read, pointed at and cut for the model) is
 * timed against the same request made by a bare keep-alive `http.request`, both to an API in
 * another process that answers at once. Overhead = runner − bare, per percentile. Target: p50 ≤ 2 ms
 * at 200 concurrent conversations. Bounded: about 40 s plus start-up.
 *
 *   npx tsx bench/toolCallOverhead.ts                 # embedded PGlite
 *   DATABASE_URL=postgres://… npx tsx bench/toolCallOverhead.ts
 */
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { ToolRunner } from "../services/ToolRunner.ts"
import { OrganizationId } from "../src/domain/ids.ts"
import { functionNameOf } from "../src/tools/toolRecord.ts"
import { client } from "../test/support/client.ts"
import { startInProcessServer } from "../test/support/inProcessServer.ts"

const CONCURRENT = Number(process.env.BENCH_CONVERSATIONS ?? 200)
const CALLS = Number(process.env.BENCH_CALLS ?? 3000)

const percentile = (values: Array<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const startApi = () =>
  new Promise<{ url: string; stop: () => void }>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, "support/instantApi.mjs")], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout.once("data", (data: Buffer) =>
      resolve({ url: `http://127.0.0.1:${data.toString().trim()}`, stop: () => child.kill() }))
    child.once("error", reject)
  })

const bareAgent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENT + 8 })
const bareGet = (url: string) =>
  new Promise<void>((resolve, reject) => {
    http.get(
      url,
      { agent: bareAgent, headers: { authorization: "Bearer bench", accept: "application/json" } },
      (response) => {
        response.resume()
        response.on("end", resolve)
      }
    ).on("error", reject)
  })

/**
 * A conversation calls a tool, then talks for a while (`THINK_MS`, randomised ±50 %) before the
 * next: 200 live conversations make ~200 calls a second, not one the instant the last answer came.
 * The saturated case (no pause) is reported too: there the figure is queueing for the CPU.
 */
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 1000)

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** Runs `calls` timed calls, `concurrency` at a time, each worker pausing `thinkMs` between its calls. */
const timed = async (calls: number, concurrency: number, call: () => Promise<unknown>, thinkMs = 0) => {
  const times: Array<number> = []
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async (_, worker) => {
    if (thinkMs > 0) await sleep((worker / concurrency) * thinkMs)
    while (next++ < calls) {
      const t0 = performance.now()
      await call()
      times.push(performance.now() - t0)
      if (thinkMs > 0) await sleep(thinkMs * (0.5 + Math.random()))
    }
  }))
  return times
}

const main = async () => {
  const target = await startApi()
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-tools-"))
  const server = await startInProcessServer({
    TALKGRAPH_DATA_DIR: dataDir,
    TALKGRAPH_SIGNUP: "true",
    LOG_LEVEL: "error",
    ...(process.env.DATABASE_URL
      ? { DATABASE_URL: process.env.DATABASE_URL, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123" }
      : {})
  })
  try {
    const api = client(server.url)
    const signup = await api.post("/api/v1/auth/signup", {
      email: `bench-${Date.now()}@example.test`,
      password: "bench-password-123",
      name: "bench"
    })
    const token = signup.body.token as string
    const organizationId = OrganizationId.make(signup.body.user.organization_id)
    const credential = await api.post("/api/v1/credentials", {
      name: "bench",
      credential_type: "bearer_token",
      credential_data: { token: "bench-token-0123456789" }
    }, { token })
    const tool = await api.post("/api/v1/tools", {
      name: "Look up order",
      definition: {
        type: "http_api",
        config: {
          method: "GET",
          url: `${target.url}/orders/{{order_id}}`,
          credential_uuid: credential.body.uuid,
          parameters: [{ name: "order_id", type: "string", description: "id" }],
          preset_parameters: [{ name: "caller", type: "string", value_template: "{{first_name}}" }],
          response_pointer: "/order/status"
        }
      }
    }, { token })
    if (tool.status !== 200) throw new Error(`tool creation failed: ${JSON.stringify(tool.body)}`)
    const runnable = {
      uuid: tool.body.tool_uuid,
      name: functionNameOf(tool.body.name),
      description: "Look up order",
      definition: tool.body.definition
    }
    const runner = await server.run(ToolRunner)
    const viaRunner = () =>
      Effect.runPromise(runner.run({
        organizationId,
        tool: runnable,
        arguments: "{\"order_id\":\"A-42\"}",
        variables: { first_name: "Ada" }
      })).then((outcome) => {
        if (outcome.status !== "success") throw new Error(outcome.result)
      })
    const bare = () => bareGet(`${target.url}/orders/A-42?caller=Ada`)

    // Warm both paths (connections, JIT) before measuring.
    await timed(500, 50, viaRunner)
    await timed(500, 50, bare)
    const report = async (label: string, concurrency: number, calls: number, thinkMs: number) => {
      const runnerTimes = await timed(calls, concurrency, viaRunner, thinkMs)
      const bareTimes = await timed(calls, concurrency, bare, thinkMs)
      const line = (p: number) =>
        `p${p} ${percentile(runnerTimes, p).toFixed(2)} ms (bare ${
          percentile(bareTimes, p).toFixed(2)
        } ms) → overhead ${(percentile(runnerTimes, p) - percentile(bareTimes, p)).toFixed(2)} ms`
      console.log(`${label}, ${calls} tool calls: ${line(50)}; ${line(99)}`)
    }
    await report("1 conversation", 1, Math.min(CALLS, 1000), 0)
    await report(
      `${CONCURRENT} concurrent conversations (${THINK_MS} ms ±50 % between calls)`,
      CONCURRENT,
      CALLS,
      THINK_MS
    )
    await report(`${CONCURRENT} concurrent conversations, saturated (no pause)`, CONCURRENT, CALLS, 0)
  } finally {
    await server.close()
    target.stop()
    bareAgent.destroy()
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

await main()
