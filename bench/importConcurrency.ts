/**
 * A large contacts import beside live traffic: while one organization creates a campaign from a
 * 1,000,000-row CSV, another organization's clients keep calling the API, and the script prints
 * p50/p90/p99/max of those other requests (and the same figures with no import running, for
 * comparison), how long the create request itself took, and the import rate (rows per second
 * from the create request until the campaign's contacts are loaded).
 *
 *   npx tsx bench/importConcurrency.ts                # embedded PGlite (the case this is about)
 *   DATABASE_URL=postgres://… npx tsx bench/importConcurrency.ts
 *   BENCH_ROWS=200000 npx tsx bench/importConcurrency.ts
 *
 * The server runs as its own process, as in production; the other organization's clients are 4
 * loops, each pausing 20 ms between requests (a mix of campaign list, campaign get and auth/me,
 * each reading the database). The load average is printed: on a shared machine the figures move
 * with the neighbours.
 */
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "../test/support/process.ts"
import { definitionUsing } from "../test/support/workflowRows.ts"

const ROWS = Number(process.env.BENCH_ROWS ?? 1_000_000)
const CLIENTS = 4
const PAUSE_MS = 20
const BASELINE_MS = 5_000
const databaseUrl = process.env.DATABASE_URL

interface Account {
  readonly token: string
}

const json = async (url: string, init: RequestInit & { token?: string } = {}) => {
  const headers: Record<string, string> = { "content-type": "application/json" }
  if (init.token) headers.authorization = `Bearer ${init.token}`
  const response = await fetch(url, { ...init, headers: { ...headers, ...(init.headers as Record<string, string>) } })
  const text = await response.text()
  return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
}

const signup = async (base: string, label: string): Promise<Account> => {
  const reply = await json(`${base}/api/v1/auth/signup`, {
    method: "POST",
    body: JSON.stringify({ email: `${label}-${Date.now()}@example.test`, password: "bench-password-123", name: label })
  })
  if (reply.status !== 200) throw new Error(`signup: ${reply.status} ${JSON.stringify(reply.body)}`)
  return { token: reply.body.token }
}

/** The API wants every node named. */
const namedNodes = (definition: ReturnType<typeof definitionUsing>) => ({
  ...definition,
  nodes: definition.nodes.map((node) => ({ ...node, data: { ...node.data, name: node.id } }))
})

const newWorkflow = async (base: string, account: Account) => {
  const reply = await json(`${base}/api/v1/workflow/create/definition`, {
    method: "POST",
    token: account.token,
    body: JSON.stringify({ name: "Bench agent", workflow_definition: namedNodes(definitionUsing(["first_name"])) })
  })
  if (reply.status !== 200) throw new Error(`workflow: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body.id as number
}

/** US numbers in mixed formats, two context columns, a quoted field (as bench/csvIngest.ts writes). */
const writeCsv = async (file: string, rows: number) => {
  const out = fs.createWriteStream(file)
  const write = (text: string) =>
    new Promise<void>((resolve) => (out.write(text) ? resolve() : out.once("drain", resolve)))
  await write("phone_number,first_name,note\r\n")
  let chunk = ""
  for (let i = 0; i < rows; i++) {
    const line = String(2_000_000 + i).padStart(7, "0")
    const exchange = 200 + Math.floor(i / 10_000) % 700
    const phone = i % 2 === 0 ? `+1415${exchange}${line.slice(-4)}` : `"+1 (415) ${exchange}-${line.slice(-4)}"`
    chunk += `${phone},Name${i},"likes tea, biscuits"\r\n`
    if (chunk.length > 1 << 16) {
      await write(chunk)
      chunk = ""
    }
  }
  await write(chunk)
  await new Promise<void>((resolve) => out.end(resolve))
}

const upload = async (base: string, account: Account, file: string) => {
  const grant = await json(`${base}/api/v1/s3/presigned-upload-url`, { method: "POST", token: account.token })
  if (grant.status !== 200) throw new Error(`presign: ${grant.status} ${JSON.stringify(grant.body)}`)
  const put = await fetch(grant.body.upload_url, {
    method: "PUT",
    headers: { "content-type": "text/csv" },
    body: fs.createReadStream(file) as unknown as ReadableStream,
    duplex: "half"
  } as RequestInit)
  if (!put.ok) throw new Error(`upload: ${put.status} ${await put.text()}`)
  return grant.body.s3_key as string
}

const createCampaign = (base: string, account: Account, workflowId: number, sourceId: string) =>
  json(`${base}/api/v1/campaign/create`, {
    method: "POST",
    token: account.token,
    body: JSON.stringify({ name: "Bench import", workflow_id: workflowId, source_type: "csv", source_id: sourceId })
  })

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN

const summary = (label: string, latencies: ReadonlyArray<number>, failures: number) => {
  const sorted = [...latencies].sort((a, b) => a - b)
  const ms = (value: number) => `${value.toFixed(1)} ms`
  return `${label}: ${sorted.length} requests (${failures} failed), p50 ${ms(percentile(sorted, 50))}, p90 ${
    ms(percentile(sorted, 90))
  }, ` +
    `p99 ${ms(percentile(sorted, 99))}, max ${ms(sorted.at(-1) ?? NaN)}`
}

/** The other organization's clients, until `done` resolves: each request's latency. */
const otherTraffic = async (base: string, account: Account, campaignId: number, done: Promise<unknown>) => {
  let running = true
  void done.finally(() => (running = false))
  const latencies: Array<number> = []
  let failures = 0
  const paths = ["/api/v1/campaign/?limit=20", `/api/v1/campaign/${campaignId}`, "/api/v1/auth/me"]
  await Promise.all(Array.from({ length: CLIENTS }, async (_, client) => {
    for (let i = client; running; i++) {
      const started = performance.now()
      const reply = await fetch(`${base}${paths[i % paths.length]}`, {
        headers: { authorization: `Bearer ${account.token}` }
      })
      await reply.arrayBuffer()
      latencies.push(performance.now() - started)
      if (reply.status !== 200) failures++
      await new Promise((resolve) => setTimeout(resolve, PAUSE_MS))
    }
  }))
  return { latencies, failures }
}

/** Until the campaign's contacts are loaded (at once when the create answered with them). */
const loaded = async (base: string, account: Account, created: { status: number; body: any }) => {
  if (created.status !== 200) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`)
  let campaign = created.body
  while (campaign.import !== undefined && campaign.import.status === "loading") {
    await new Promise((resolve) => setTimeout(resolve, 250))
    campaign = (await json(`${base}/api/v1/campaign/${campaign.id}`, { token: account.token })).body
  }
  if (campaign.import !== undefined && campaign.import.status !== "ready") {
    throw new Error(`import: ${JSON.stringify(campaign.import)}`)
  }
  return campaign
}

const main = async () => {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-"))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  const server = spawnTalkgraph(["serve"], {
    TALKGRAPH_DATA_DIR: dataDir,
    PORT: String(port),
    TALKGRAPH_SIGNUP: "true",
    TALKGRAPH_ADMIN_EMAIL: "bench-admin@example.test",
    TALKGRAPH_ADMIN_PASSWORD: "bench-admin-password",
    UPLOAD_MAX_BYTES: String(1024 ** 3),
    LOG_LEVEL: "error",
    ...(databaseUrl
      ? { DATABASE_URL: databaseUrl, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123456789" }
      : {})
  })
  try {
    await waitUntilServing(server, base)
    console.log(`database: ${databaseUrl ? "PostgreSQL" : "PGlite (embedded)"}, ${ROWS.toLocaleString("en-US")} rows`)
    const importer = await signup(base, "importer")
    const other = await signup(base, "other")
    const importerWorkflow = await newWorkflow(base, importer)
    const otherWorkflow = await newWorkflow(base, other)
    const small = await loaded(
      base,
      other,
      await createCampaign(
        base,
        other,
        otherWorkflow,
        await upload(
          base,
          other,
          await (async () => {
            const file = path.join(dataDir, "small.csv")
            await writeCsv(file, 50)
            return file
          })()
        )
      )
    )
    const file = path.join(dataDir, "contacts.csv")
    await writeCsv(file, ROWS)
    const sourceId = await upload(base, importer, file)

    const baseline = await otherTraffic(
      base,
      other,
      small.id,
      new Promise((resolve) => setTimeout(resolve, BASELINE_MS))
    )
    console.log(summary("other requests, no import", baseline.latencies, baseline.failures))

    const started = performance.now()
    let answeredMs = 0
    const importing = createCampaign(base, importer, importerWorkflow, sourceId).then((created) => {
      answeredMs = performance.now() - started
      return loaded(base, importer, created)
    })
    const during = await otherTraffic(base, other, small.id, importing)
    const campaign = await importing
    const seconds = (performance.now() - started) / 1000
    console.log(summary("other requests during the import", during.latencies, during.failures))
    console.log(
      `import: ${campaign.total_rows.toLocaleString("en-US")} contacts in ${seconds.toFixed(1)} s ` +
        `(${Math.round(ROWS / seconds).toLocaleString("en-US")} rows/s); the create request answered in ${
          (answeredMs / 1000).toFixed(2)
        } s; ` +
        `load average ${os.loadavg()[0]!.toFixed(1)}`
    )
  } finally {
    await stop(server)
    await fsp.rm(dataDir, { recursive: true, force: true })
  }
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
