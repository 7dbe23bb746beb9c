/**
 * Chat turn overhead: the server's time per text-chat message minus the time the LLM took, with a
 * loopback stand-in LLM that answers instantly (one streamed line and usage). Figures: p50/p99 at
 * 1 session and at 200 concurrent sessions, and resident memory per open session. Bounded: about
 * a minute plus start-up. Each line also gives the server's CPU time per message: latency on a
 * shared machine depends on its neighbours, CPU time much less, so it is the figure to compare
 * between versions.
 *
 *   npx tsx bench/chatTurnOverhead.ts                 # embedded PGlite
 *   DATABASE_URL=postgres://… npx tsx bench/chatTurnOverhead.ts
 */
import * as fs from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "../test/support/process.ts"
import { cpuMs } from "./support/processCpu.ts"

const admin = { email: "bench@example.test", password: "bench-password-1" }
const CONCURRENT_SESSIONS = Number(process.env.BENCH_SESSIONS ?? 200)
const SECONDS = Number(process.env.BENCH_SECONDS ?? 15)
/** Sessions opened to measure memory per session: enough that the heap's own swings (tens of MiB) divide down. */
const MEMORY_SESSIONS = Number(process.env.BENCH_MEMORY_SESSIONS ?? 5000)
/**
 * Pause between a session's messages at 200 sessions (randomised ±50 %): people read and type,
 * so 200 live chats offer ~70 messages/s, not one message the instant the last reply lands.
 * The saturated case (no pause) is reported too, as the most messages per second one process serves.
 */
const THINK_MS = Number(process.env.BENCH_THINK_MS ?? 3000)
/** Messages per conversation before a worker starts a new one: chats are short, transcripts bounded. */
const MESSAGES_PER_SESSION = Number(process.env.BENCH_MESSAGES_PER_SESSION ?? 20)

/** The instant LLM: records how long each answer took it, so that time can be taken out. */
const startInstantLlm = async () => {
  const handlingMs: Array<number> = []
  const chunk = (body: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", ...body })}\n\n`
  const server = http.createServer((request, response) => {
    request.resume()
    request.on("end", () => {
      const t0 = performance.now()
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write(
        chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "OK." }, finish_reason: null }] })
      )
      response.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }))
      response.write(chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }))
      response.end("data: [DONE]\n\n", () => handlingMs.push(performance.now() - t0))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    handlingMs,
    close: () => server.close()
  }
}

const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENT_SESSIONS + 8 })

const call = (base: string, method: string, route: string, headers: Record<string, string>, body?: unknown) =>
  new Promise<{ status: number; body: any }>((resolve, reject) => {
    const url = new URL(route, base)
    const payload = body === undefined ? undefined : JSON.stringify(body)
    const request = http.request(
      {
        host: url.hostname,
        port: url.port,
        path: url.pathname,
        method,
        agent,
        headers: { ...headers, ...(payload ? { "content-type": "application/json" } : {}) }
      },
      (response) => {
        let text = ""
        response.on("data", (data) => (text += data))
        response.on(
          "end",
          () => resolve({ status: response.statusCode ?? 0, body: text ? JSON.parse(text) : undefined })
        )
      }
    )
    request.on("error", reject)
    request.end(payload)
  })

/** A kept-alive socket the server just closed fails once; the request is safe to send again on a new one. */
const callOnce = call
const callRetrying: typeof call = (...args) =>
  callOnce(...args).catch((error) => (error?.code === "ECONNRESET" ? callOnce(...args) : Promise.reject(error)))

const rssKb = async (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(await fs.readFile(`/proc/${pid}/status`, "utf8"))?.[1] ?? 0)

/** The median of five readings a fifth of a second apart: one reading can land on either side of a collection. */
const settledRssKb = async (pid: number) => {
  const readings: Array<number> = []
  for (let i = 0; i < 5; i++) {
    await new Promise((resolve) => setTimeout(resolve, 200))
    readings.push(await rssKb(pid))
  }
  return readings.sort((a, b) => a - b)[2]!
}

const percentile = (values: Array<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? NaN
}

const main = async () => {
  const llm = await startInstantLlm()
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-chat-"))
  const databaseUrl = process.env.DATABASE_URL
  const port = String(await freePort())
  const url = `http://127.0.0.1:${port}`
  const proc = spawnTalkgraph(["serve"], {
    PORT: port,
    TALKGRAPH_DATA_DIR: dataDir,
    TALKGRAPH_ADMIN_EMAIL: admin.email,
    TALKGRAPH_ADMIN_PASSWORD: admin.password,
    ...(databaseUrl
      ? { DATABASE_URL: databaseUrl, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123" }
      : {})
  })
  try {
    await waitUntilServing(proc, url, 120_000)
    const call = callRetrying
    const login = await call(url, "POST", "/api/v1/auth/login", {}, admin)
    const session = { authorization: `Bearer ${login.body.token}` }
    const key = (await call(url, "POST", "/api/v1/user/api-keys", session, { name: "bench" })).body.api_key as string
    const auth = { "x-api-key": key }
    await call(url, "PUT", "/api/v1/organizations/model-configurations", auth, {
      llm: { provider: "openai", model: "m", api_key: "sk-bench", base_url: llm.baseUrl }
    })
    const workflow = await call(url, "POST", "/api/v1/workflow/create/definition", auth, {
      name: "Bench agent",
      workflow_configurations: { max_turns: 100000, max_duration_seconds: 86400 },
      workflow_definition: {
        nodes: [
          {
            id: "start",
            type: "startCall",
            position: { x: 0, y: 0 },
            data: { name: "Start", greeting: "Hello!", prompt: "Answer briefly." }
          },
          { id: "end", type: "endCall", position: { x: 0, y: 100 }, data: { name: "End", prompt: "Say goodbye." } }
        ],
        edges: [{ id: "e", source: "start", target: "end", data: { label: "Done", condition: "The user is done" } }]
      }
    })
    const sessions = `/api/v1/workflow/${workflow.body.id}/text-chat/sessions`
    const open = async () => (await call(url, "POST", sessions, auth, {})).body.workflow_run_id as number

    /**
     * One worker per session sends messages until the deadline, moving to a fresh session every
     * MESSAGES_PER_SESSION messages (opening it is not timed); latencies minus the LLM's time.
     */
    const measure = async (runIds: Array<number>, seconds: number, thinkMs = 0) => {
      const latencies: Array<number> = []
      let failures = 0
      llm.handlingMs.length = 0
      const cpuBefore = await cpuMs(proc.child.pid!)
      const deadline = performance.now() + seconds * 1000
      await Promise.all(runIds.map(async (first) => {
        let runId = first
        if (thinkMs > 0) await new Promise((resolve) => setTimeout(resolve, Math.random() * thinkMs))
        for (let sent = 0; performance.now() < deadline; sent++) {
          if (sent > 0 && sent % MESSAGES_PER_SESSION === 0) runId = await open()
          if (sent > 0 && thinkMs > 0) {
            await new Promise((resolve) => setTimeout(resolve, thinkMs * (0.5 + Math.random())))
          }
          const t0 = performance.now()
          const answer = await call(url, "POST", `${sessions}/${runId}/messages`, auth, { text: "Hi" })
          latencies.push(performance.now() - t0)
          if (answer.status !== 200) failures++
        }
      }))
      const serverCpuMs = ((await cpuMs(proc.child.pid!)) - cpuBefore) / Math.max(1, latencies.length)
      const llmMs = llm.handlingMs.reduce((sum, ms) => sum + ms, 0) / Math.max(1, llm.handlingMs.length)
      const overhead = latencies.map((ms) => ms - llmMs)
      return {
        messages: latencies.length,
        failures,
        llmMs,
        serverCpuMs,
        p50: percentile(overhead, 0.5),
        p99: percentile(overhead, 0.99),
        rate: latencies.length / seconds
      }
    }

    const label = databaseUrl ? "PostgreSQL" : "embedded PGlite"
    const single = [await open()]
    await measure(single, 2) // warm-up
    const one = await measure(single, SECONDS)
    const many = await Promise.all(Array.from({ length: CONCURRENT_SESSIONS }, open))
    await measure(many, 2) // warm-up
    const concurrent = await measure(many, SECONDS, THINK_MS)
    const saturated = await measure(many, SECONDS)
    const report = (name: string, r: typeof one) =>
      console.log(
        `${label}: chat turn overhead, ${name}: p50 ${r.p50.toFixed(2)} ms, p99 ${r.p99.toFixed(2)} ms ` +
          `(${r.messages} messages, ${r.rate.toFixed(0)}/s, ${r.failures} non-200, stand-in LLM ${
            r.llmMs.toFixed(3)
          } ms/answer taken out; ` +
          `server CPU ${r.serverCpuMs.toFixed(2)} ms/message${databaseUrl ? "" : " with PGlite"})`
      )
    report("1 session", one)
    report(`${CONCURRENT_SESSIONS} concurrent sessions, each pausing ~${THINK_MS} ms between messages`, concurrent)
    report(`${CONCURRENT_SESSIONS} concurrent sessions, no pauses (saturated)`, saturated)

    const before = await settledRssKb(proc.child.pid!)
    for (let opened = 0; opened < MEMORY_SESSIONS; opened += 50) await Promise.all(Array.from({ length: 50 }, open))
    const after = await settledRssKb(proc.child.pid!)
    console.log(
      `${label}: memory per open session: ${(((after - before) * 1024) / MEMORY_SESSIONS / 1024).toFixed(2)} KiB ` +
        `(server RSS ${(before / 1024).toFixed(0)} → ${
          (after / 1024).toFixed(0)
        } MiB over ${MEMORY_SESSIONS} more open sessions; ` +
        `sessions live in the database, so this includes its cache${
          databaseUrl ? "" : " (PGlite runs in the server process)"
        })`
    )
  } catch (error) {
    console.error(proc.output().slice(-3000))
    throw error
  } finally {
    agent.destroy()
    llm.close()
    await stop(proc)
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

await main()
