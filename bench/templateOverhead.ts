/**
 * Template creation overhead: what `POST /api/v1/workflow/create/template` costs in server time
 * beyond the LLM call. The organization's LLM is the loopback scripted stand-in answering
 * instantly with valid content, so the request's latency is almost all our own work (auth, model
 * settings + key decryption, the openai client, decoding + graph validation, the insert
 * transaction, reading the result back). The bare LLM round trip through the same openai client
 * is measured separately and subtracted. Bounded: a few hundred requests.
 *
 *   npx tsx bench/templateOverhead.ts                 # embedded PGlite
 *   DATABASE_URL=postgres://… npx tsx bench/templateOverhead.ts
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import OpenAI from "openai"
import { startInProcessServer } from "../test/support/inProcessServer.ts"
import { reply, startScriptedLlm } from "../test/support/scriptedLlm.ts"
import { generatedAgentContent } from "../test/support/workflowGraphs.ts"

const databaseUrl = process.env.DATABASE_URL
const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 200)
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8)
const WARMUP = 10

const percentile = (values: Array<number>, p: number) => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const fmt = (ms: number) => `${ms.toFixed(2)} ms`

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-"))
const settings: Record<string, string> = {
  TALKGRAPH_DATA_DIR: dataDir,
  TALKGRAPH_SIGNUP: "true",
  LOG_LEVEL: "error",
  TALKGRAPH_ADMIN_EMAIL: "bench-admin@example.test",
  TALKGRAPH_ADMIN_PASSWORD: "bench-admin-password",
  ...(databaseUrl
    ? { DATABASE_URL: databaseUrl, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123456789" }
    : {})
}
const server = await startInProcessServer(settings)
const baseUrl = server.url
const llm = await startScriptedLlm()
const content = generatedAgentContent()

const call = async (method: string, route: string, token: string | undefined, body?: unknown): Promise<any> => {
  const response = await fetch(`${baseUrl}${route}`, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? null : JSON.stringify(body)
  })
  const parsed: any = await response.json()
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(parsed)}`)
  return parsed
}

const signup = await call("POST", "/api/v1/auth/signup", undefined, {
  email: `bench-${Date.now()}@example.test`,
  password: "bench-password-123",
  name: "bench"
})
const token: string = signup.token
await call("PUT", "/api/v1/organizations/model-configurations", token, {
  llm: { provider: "openai", model: "instant", api_key: "sk-bench-0123456789", base_url: llm.baseUrl }
})
const templateRequest = {
  call_type: "inbound",
  use_case: "Support",
  activity_description: "Answer billing questions and book callbacks."
}

let lastWorkflowId = 0
const timeTemplate = async () => {
  llm.enqueue(reply.json(content))
  const started = performance.now()
  lastWorkflowId = (await call("POST", "/api/v1/workflow/create/template", token, templateRequest)).id
  return performance.now() - started
}

/** A plain authenticated read of one workflow: the floor any request pays here (HTTP, auth, one query). */
const timeRead = async () => {
  const started = performance.now()
  await call("GET", `/api/v1/workflow/fetch/${lastWorkflowId}`, token)
  return performance.now() - started
}

const openai = new OpenAI({ apiKey: "sk-bench-0123456789", baseURL: llm.baseUrl, maxRetries: 0 })
const timeBareLlm = async () => {
  llm.enqueue(reply.json(content))
  const started = performance.now()
  await openai.chat.completions.create({
    model: "instant",
    messages: [{ role: "user", content: "x" }],
    response_format: { type: "json_object" }
  })
  return performance.now() - started
}

console.log(
  `template creation overhead on ${databaseUrl ? "PostgreSQL" : "PGlite"} (instant scripted LLM, ${REQUESTS} requests)`
)
for (let i = 0; i < WARMUP; i++) {
  await timeTemplate()
  await timeBareLlm()
}
const template: Array<number> = []
const bare: Array<number> = []
const reads: Array<number> = []
for (let i = 0; i < REQUESTS; i++) {
  template.push(await timeTemplate())
  bare.push(await timeBareLlm())
  reads.push(await timeRead())
}
const bareP50 = percentile(bare, 50)
console.log(
  `  template request, sequential: p50 ${fmt(percentile(template, 50))}, p95 ${fmt(percentile(template, 95))}, max ${
    fmt(Math.max(...template))
  }`
)
console.log(`  bare LLM round trip (same openai client, same stand-in): p50 ${fmt(bareP50)}`)
console.log(
  `  => server time beyond the LLM call: p50 ${fmt(percentile(template, 50) - bareP50)}, p95 ${
    fmt(percentile(template, 95) - bareP50)
  }`
)
console.log(
  `  for comparison, GET /api/v1/workflow/fetch/{id}: p50 ${fmt(percentile(reads, 50))}, p95 ${
    fmt(percentile(reads, 95))
  }`
)

const concurrentStarted = performance.now()
let next = 0
const concurrent: Array<number> = []
let failures = 0
let firstFailure = ""
await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
  while (next < REQUESTS) {
    next++
    await timeTemplate().then((ms) => concurrent.push(ms), (error: Error) => {
      failures++
      firstFailure ||= error.message
    })
  }
}))
const seconds = (performance.now() - concurrentStarted) / 1000
console.log(
  `  ${CONCURRENCY} concurrent clients: ${(concurrent.length / seconds).toFixed(1)} templates/s, p50 ${
    fmt(percentile(concurrent, 50))
  }, p95 ${fmt(percentile(concurrent, 95))}, failed ${failures}/${REQUESTS}`
)
if (firstFailure) console.log(`  first failure: ${firstFailure}`)

await llm.close()
await server.close()
await fs.rm(dataDir, { recursive: true, force: true })
process.exit(0)
