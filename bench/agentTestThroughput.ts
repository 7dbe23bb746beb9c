/**
 * Agent test throughput: text-mode test conversations per minute one server process holds, with a
 * loopback LLM that answers instantly (the agent's streamed line, the simulated caller's JSON turn),
 * so the figure is talkgraph's own overhead: the engine, the run rows, the simulator loop and the
 * result writes. Each conversation is 5 caller turns (the case's turn limit) plus the greeting and
 * the ending. Bounded: BENCH_SECONDS (default 40) of runs plus start-up.
 *
 *   npx tsx bench/agentTestThroughput.ts                 # embedded PGlite
 *   DATABASE_URL=postgres://… npx tsx bench/agentTestThroughput.ts
 */
import * as fs from "node:fs/promises"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "../test/support/process.ts"
import { adminKeyHeaders, call } from "./support/benchApi.ts"
import { cpuMs } from "./support/processCpu.ts"

const admin = { email: "bench@example.test", password: "bench-password-1" }
const SECONDS = Number(process.env.BENCH_SECONDS ?? 40)
const TURNS = 5
/** Two runs of 10 at once: the process's own cap on simultaneous test conversations is 20. */
const RUNS_AT_ONCE = 2
const CONCURRENCY = 10

const startInstantLlm = async () => {
  let requests = 0
  const chunk = (body: Record<string, unknown>) =>
    `data: ${JSON.stringify({ id: "c", object: "chat.completion.chunk", created: 0, model: "m", ...body })}\n\n`
  const server = http.createServer((request, response) => {
    let text = ""
    request.on("data", (data) => (text += data))
    request.on("end", () => {
      requests++
      const body = JSON.parse(text)
      if (!body.stream) {
        const said = (body.messages as Array<{ role: string }>).filter((message) => message.role === "assistant").length
        response.writeHead(200, { "content-type": "application/json" })
        response.end(JSON.stringify({
          id: "c",
          object: "chat.completion",
          created: 0,
          model: "m",
          choices: [{
            index: 0,
            message: {
              role: "assistant",
              content: JSON.stringify({ message: `Question ${said + 1}?`, hang_up: false })
            },
            finish_reason: "stop"
          }],
          usage: { prompt_tokens: 30, completion_tokens: 8, total_tokens: 38 }
        }))
        return
      }
      response.writeHead(200, { "content-type": "text/event-stream" })
      response.write(
        chunk({ choices: [{ index: 0, delta: { role: "assistant", content: "Sure, noted." }, finish_reason: null }] })
      )
      response.write(chunk({ choices: [{ index: 0, delta: {}, finish_reason: "stop" }] }))
      response.write(chunk({ choices: [], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }))
      response.end("data: [DONE]\n\n")
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    requests: () => requests,
    close: () => server.close()
  }
}

const main = async () => {
  const llm = await startInstantLlm()
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-tests-"))
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
    const auth = await adminKeyHeaders(url, admin)
    await call(url, "PUT", "/api/v1/organizations/model-configurations", auth, {
      llm: { provider: "openai", model: "m", api_key: "sk-bench", base_url: llm.baseUrl }
    })
    const workflow = await call(url, "POST", "/api/v1/workflow/create/definition", auth, {
      name: "Bench agent",
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
    const agentId = workflow.body.id as number
    for (let index = 0; index < CONCURRENCY; index++) {
      await call(url, "POST", `/api/v2/agents/${agentId}/tests`, auth, {
        name: `Case ${index + 1}`,
        persona: "A curious caller with many questions",
        max_turns: TURNS,
        expectations: { nodes_not_visited: ["end"], no_loop: false }
      })
    }

    const cpuBefore = await cpuMs(proc.child.pid!)
    const started = performance.now()
    const deadline = started + SECONDS * 1000
    let conversations = 0
    let failed = 0
    const worker = async () => {
      while (performance.now() < deadline) {
        const run = await call(url, "POST", `/api/v2/agents/${agentId}/test-runs`, auth, {
          repetitions: 2,
          concurrency: CONCURRENCY
        })
        if (run.status !== 202) throw new Error(`test run refused: ${run.status} ${JSON.stringify(run.body)}`)
        for (;;) {
          await new Promise((resolve) => setTimeout(resolve, 100))
          const read = await call(url, "GET", `/api/v2/agents/${agentId}/test-runs/${run.body.data.id}`, auth)
          if (read.body.data.status === "completed" || read.body.data.status === "failed") {
            for (const result of read.body.data.cases) {
              conversations += result.completed
              failed += result.conversations.filter((item: any) => item.error !== null).length
            }
            break
          }
        }
      }
    }
    await Promise.all(Array.from({ length: RUNS_AT_ONCE }, worker))
    const elapsedS = (performance.now() - started) / 1000
    const cpu = (await cpuMs(proc.child.pid!)) - cpuBefore
    console.log(`database: ${databaseUrl ? "PostgreSQL" : "PGlite (embedded)"}`)
    console.log(
      `${conversations} test conversations (${TURNS} caller turns each, ${RUNS_AT_ONCE} runs × ${CONCURRENCY} at once) in ${
        elapsedS.toFixed(1)
      } s; ${failed} failed`
    )
    console.log(`throughput: ${Math.round((conversations / elapsedS) * 60)} conversations per minute per process`)
    console.log(`server CPU: ${(cpu / Math.max(1, conversations)).toFixed(1)} ms per conversation`)
    console.log(`LLM requests answered: ${llm.requests()}`)
  } finally {
    await stop(proc)
    llm.close()
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}

await main()
