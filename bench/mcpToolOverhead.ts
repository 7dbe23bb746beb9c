/**
 * MCP tool-call overhead: talkgraph's own time around one call of an MCP server's tool, at 1 and
 * at 200 concurrent conversations. The tool runner (credential looked up, decrypted and checked
 * against its bound host, the SDK client over talkgraph's policy-checked fetch, session opened,
 * tool called, session ended, result cut for the model) is timed against the MCP SDK's client
 * doing the same exchange (initialize, tools/call, DELETE) over a bare keep-alive `http.request`
 * fetch, both to an SDK server in another process that answers at once. Overhead = runner − bare,
 * per percentile. Each call is four HTTP exchanges and the SDK's own JSON-RPC work, so the
 * concurrent case defaults to 50 conversations (2 shared cores saturate well before 200).
 * Bounded: about a minute plus start-up.
 *
 *   npx tsx bench/mcpToolOverhead.ts                 # embedded PGlite
 *   DATABASE_URL=postgres://… npx tsx bench/mcpToolOverhead.ts
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import { Effect } from "effect"
import { spawn } from "node:child_process"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { Readable } from "node:stream"
import { ToolRunner } from "../services/ToolRunner.ts"
import { OrganizationId } from "../src/domain/ids.ts"
import { expandMcpTool } from "../src/tools/mcpTools.ts"
import { functionNameOf } from "../src/tools/toolRecord.ts"
import { client } from "../test/support/client.ts"
import { startInProcessServer } from "../test/support/inProcessServer.ts"

const CONCURRENT = Number(process.env.BENCH_CONVERSATIONS ?? 50)
const CALLS = Number(process.env.BENCH_CALLS ?? 1000)
/** A conversation calls, then talks for a while (±50 %) before its next call. */
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 1000)

const percentile = (values: Array<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

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

const startMcp = () =>
  new Promise<{ url: string; stop: () => void }>((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(import.meta.dirname, "support/instantMcp.mjs")], {
      stdio: ["ignore", "pipe", "inherit"]
    })
    child.stdout.once("data", (data: Buffer) =>
      resolve({ url: `http://127.0.0.1:${data.toString().trim()}/mcp`, stop: () => child.kill() }))
    child.once("error", reject)
  })

const bareAgent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENT * 4 + 8 })

/** A fetch with nothing of talkgraph's: node's http on a keep-alive agent, the answer streamed. */
const bareFetch: FetchLike = (input, init) =>
  new Promise((resolve, reject) => {
    const headers: Record<string, string> = {}
    new Headers(init?.headers).forEach((value, name) => {
      headers[name] = value
    })
    const outgoing = http.request(
      new URL(input),
      { method: init?.method ?? "GET", headers, agent: bareAgent },
      (response) => {
        const status = response.statusCode ?? 502
        const answer = new Headers()
        for (const [name, value] of Object.entries(response.headers)) {
          if (typeof value === "string") answer.set(name, value)
        }
        if (status === 202 || status === 204) {
          response.resume()
          return resolve(new Response(null, { status, headers: answer }))
        }
        resolve(new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>, { status, headers: answer }))
      }
    )
    outgoing.on("error", reject)
    outgoing.end(typeof init?.body === "string" ? init.body : undefined)
  })

/** The same exchange with the SDK alone: what any MCP client pays. */
const bareCall = async (url: string) => {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    fetch: bareFetch,
    requestInit: { headers: { authorization: "Bearer bench-token-0123456789" } }
  })
  const mcp = new Client({ name: "bench", version: "1" })
  await mcp.connect(transport)
  try {
    const result = await mcp.callTool({ name: "look_up_order", arguments: { order_id: "A-42" } })
    if (result.isError) throw new Error("the bench tool failed")
  } finally {
    void transport.terminateSession().catch(() => undefined).finally(() => mcp.close())
  }
}

const main = async () => {
  const target = await startMcp()
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-mcp-"))
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
      name: "Orders",
      definition: { type: "mcp", config: { url: target.url, credential_uuid: credential.body.uuid } }
    }, { token })
    if (tool.status !== 200) throw new Error(`tool creation failed: ${JSON.stringify(tool.body)}`)
    const [runnable] = expandMcpTool({
      uuid: tool.body.tool_uuid,
      name: functionNameOf(tool.body.name),
      description: "Orders",
      definition: tool.body.definition
    })
    if (!runnable) throw new Error("the server's catalog was not fetched")
    const runner = await server.run(ToolRunner)
    const viaRunner = () =>
      Effect.runPromise(runner.run({
        organizationId,
        tool: runnable,
        arguments: "{\"order_id\":\"A-42\"}",
        variables: {}
      })).then((outcome) => {
        if (outcome.status !== "success") throw new Error(outcome.result)
      })
    const bare = () => bareCall(target.url)

    await timed(300, 20, viaRunner)
    await timed(300, 20, bare)
    const report = async (label: string, concurrency: number, calls: number, thinkMs: number) => {
      const runnerTimes = await timed(calls, concurrency, viaRunner, thinkMs)
      const bareTimes = await timed(calls, concurrency, bare, thinkMs)
      const line = (p: number) =>
        `p${p} ${percentile(runnerTimes, p).toFixed(2)} ms (bare SDK ${
          percentile(bareTimes, p).toFixed(2)
        } ms) → overhead ${(percentile(runnerTimes, p) - percentile(bareTimes, p)).toFixed(2)} ms`
      console.log(`${label}, ${calls} MCP tool calls: ${line(50)}; ${line(99)}`)
    }
    await report("1 conversation", 1, Math.min(CALLS, 500), 0)
    await report(
      `${CONCURRENT} concurrent conversations (${THINK_MS} ms ±50 % between calls)`,
      CONCURRENT,
      CALLS,
      THINK_MS
    )
  } finally {
    await server.close()
    target.stop()
    bareAgent.destroy()
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

await main()
