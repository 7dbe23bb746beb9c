/**
 * Contacts CSV ingestion: rows per second and peak RSS growth while a campaign is created from a
 * 100,000- and a 1,000,000-row CSV, through the real Campaigns service (streaming parse, E.164
 * checks, contacts loaded in the background in short transactions: COPY on PostgreSQL, multi-row
 * INSERT on PGlite), until every contact is stored. `bench/importConcurrency.ts` measures the
 * same import beside other organizations' requests.
 *
 *   npx tsx bench/csvIngest.ts                      # embedded PGlite
 *   DATABASE_URL=postgres://… npx tsx bench/csvIngest.ts
 *   npx tsx bench/csvIngest.ts 100000              # sizes of your choice
 *
 * With PGlite the database runs inside this process, so its memory is part of the RSS figure; the
 * JavaScript heap's peak growth is printed beside it (what the import itself holds, bounded by a
 * constant: see layers/campaigns/contactIngest.ts). `node --max-old-space-size=128 --import tsx
 * bench/csvIngest.ts 1000000` shows the bound: under tsx the heap holds ~80 MB (the application's
 * sources and source maps) before the import starts, and the import adds the same few MB at a
 * million rows as at a hundred thousand. With 96 MB the collector, left 16 MB, runs almost without
 * pause at this import's allocation rate, and V8 stops the process ("ineffective mark-compacts")
 * though nothing accumulates.
 * The CPU time of this process and the load average are printed too: on a shared machine the
 * rows per second say as much about the neighbours as about the code.
 */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { ServicesLive } from "../app/appLayer.ts"
import { AppConfigLive } from "../app/config.ts"
import { Campaigns } from "../services/Campaigns.ts"
import { PublicUrl } from "../services/PublicUrl.ts"
import { OrganizationId, WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import { allScopes } from "../src/domain/scopes.ts"
import { eventLoopLag } from "./support/eventLoopLag.ts"
import { databaseName, type Figure, reportFigures } from "./support/figures.ts"

const sizes = process.argv.slice(2).map(Number).filter((n) => n > 0)
const rowCounts = sizes.length > 0 ? sizes : [100_000, 1_000_000]
const databaseUrl = process.env.DATABASE_URL

/** A realistic file: US numbers in mixed formats, two context columns, a quoted field, ~1% duplicates. */
const writeCsv = async (file: string, rows: number) => {
  await fsp.mkdir(path.dirname(file), { recursive: true })
  const out = fs.createWriteStream(file)
  const write = (text: string) =>
    new Promise<void>((resolve) => (out.write(text) ? resolve() : out.once("drain", resolve)))
  await write("phone_number,first_name,note\r\n")
  let chunk = ""
  for (let i = 0; i < rows; i++) {
    const n = i % 100 === 99 ? i - 1 : i
    const line = String(2_000_000 + n).padStart(7, "0")
    const exchange = 200 + Math.floor(n / 10_000) % 700
    const phone = i % 2 === 0 ? `+1415${exchange}${line.slice(-4)}` : `"+1 (415) ${exchange}-${line.slice(-4)}"`
    chunk += `${phone},Name${i},"likes tea, biscuits"\r\n`
    if (chunk.length > 1 << 16) {
      await write(chunk)
      chunk = ""
    }
  }
  await write(chunk)
  await new Promise<void>((resolve) => out.end(resolve))
  return (await fsp.stat(file)).size
}

const main = async () => {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-"))
  const settings: Record<string, string> = {
    TALKGRAPH_DATA_DIR: dataDir,
    LOG_LEVEL: "error",
    UPLOAD_MAX_BYTES: String(1024 ** 3),
    ...(databaseUrl
      ? { DATABASE_URL: databaseUrl, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123456789" }
      : {})
  }
  const layer = ServicesLive.pipe(
    // Nothing here hands out URLs; the services only need to know where they would point.
    Layer.provide(Layer.succeed(PublicUrl, "http://127.0.0.1:8000")),
    Layer.provide(AppConfigLive),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings)))))
  )
  console.log(`database: ${databaseUrl ? "PostgreSQL" : "PGlite (embedded)"}`)
  const figures: Array<Figure> = []
  let serverVersion: string | undefined
  const loopLag = eventLoopLag()
  await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
    const context = yield* Layer.build(layer)
    const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(effect, context) as Effect.Effect<A, E>
    const sql = yield* run(SqlClient.SqlClient)
    const campaigns = yield* run(Campaigns)
    serverVersion = (yield* sql<{ server_version: string }>`SHOW server_version`)[0]?.server_version
    const [org] = yield* sql<{ id: number }>`INSERT INTO organizations (name) VALUES ('bench') RETURNING id`
    const [workflow] = yield* sql<{ id: number }>`
      INSERT INTO workflows (organization_id, workflow_uuid, name) VALUES (${org!.id}, ${crypto.randomUUID()}, 'bench')
      RETURNING id`
    yield* sql`
      INSERT INTO workflow_definitions (workflow_id, version_number, version_status, workflow_definition)
      VALUES (${
      workflow!.id
    }, 1, 'published', '{"nodes":[{"id":"s","type":"startCall","data":{"prompt":"Hi {{first_name}}"}}],"edges":[]}')`
    const principal: Principal = {
      userId: 0,
      organizationId: OrganizationId.make(org!.id),
      role: "owner",
      via: "session",
      sessionId: null,
      apiKeyId: null,
      scopes: allScopes
    }
    for (const rows of rowCounts) {
      const key = `organizations/${org!.id}/contacts/bench-${rows}.csv`
      const bytes = yield* Effect.promise(() => writeCsv(path.join(dataDir, "storage", key), rows))
      if (global.gc) global.gc()
      const baseline = process.memoryUsage()
      let peak = baseline.rss
      let peakHeap = baseline.heapUsed
      // Typed arrays live outside the heap (a set of every number seen was one, 16–32 MB a million rows).
      let peakBuffers = baseline.arrayBuffers
      const sampler = setInterval(() => {
        const now = process.memoryUsage()
        peak = Math.max(peak, now.rss)
        peakHeap = Math.max(peakHeap, now.heapUsed)
        peakBuffers = Math.max(peakBuffers, now.arrayBuffers)
      }, 25)
      // Writing the file and building the layers above are the warm-up.
      loopLag.reset()
      const cpuBefore = process.cpuUsage()
      const started = Date.now()
      const created = yield* campaigns.create(principal, {
        name: `bench ${rows}`,
        workflow_id: WorkflowId.make(workflow!.id),
        source_type: "csv",
        source_id: key
      })
      // A large file loads in the background: the figure is until every contact is stored, when the
      // import publishes the campaign (its updated_at). Looked at twice a second, as a person
      // watching it might: each look is a request the import lets go first, and looks every 50 ms
      // held it back (3–12% fewer rows/s in paired runs).
      let campaign = created
      while (campaign.import.status === "loading") {
        yield* Effect.sleep("500 millis")
        campaign = yield* campaigns.get(principal, created.id)
      }
      if (campaign.import.status !== "ready") throw new Error(`import failed: ${campaign.import.errors.join("; ")}`)
      const [published] = yield* sql<{ ms: number }>`
        SELECT (extract(epoch FROM updated_at) * 1000)::float8 AS ms FROM campaigns WHERE id = ${created.id}`
      const seconds = (published!.ms - started) / 1000
      const cpu = process.cpuUsage(cpuBefore)
      clearInterval(sampler)
      peak = Math.max(peak, process.memoryUsage().rss)
      const rate = Math.round(rows / seconds)
      const lag = loopLag.figures()
      const label = `${rows.toLocaleString("en-US")} rows`
      figures.push(
        { name: `${label}: rows/s`, value: rate, unit: "rows/s", ...(databaseUrl ? {} : { target: ">= 50000" }) },
        { name: `${label}: peak RSS growth`, value: Math.round((peak - baseline.rss) / 1024 ** 2), unit: "MB" },
        {
          name: `${label}: peak JS heap growth`,
          value: Math.round((peakHeap - baseline.heapUsed) / 1024 ** 2),
          unit: "MB"
        },
        { name: `${label}: event-loop delay p99`, value: lag.p99_ms, unit: "ms" }
      )
      console.log(
        `${rows.toLocaleString("en-US")} rows (${(bytes / 1024 ** 2).toFixed(1)} MB): ${seconds.toFixed(2)} s, ` +
          `${Math.round(rows / seconds).toLocaleString("en-US")} rows/s, ${campaign.total_rows} contacts stored, ` +
          `peak RSS growth ${((peak - baseline.rss) / 1024 ** 2).toFixed(0)} MB, ` +
          `peak heap growth ${((peakHeap - baseline.heapUsed) / 1024 ** 2).toFixed(0)} MB, ` +
          `peak ArrayBuffer growth ${((peakBuffers - baseline.arrayBuffers) / 1024 ** 2).toFixed(0)} MB, ` +
          `${((cpu.user + cpu.system) / 1e6).toFixed(1)} s CPU in this process, load average ${
            os.loadavg()[0]!.toFixed(1)
          }`
      )
      yield* sql`DELETE FROM campaigns WHERE id = ${campaign.id}`
    }
  })))
  await fsp.rm(dataDir, { recursive: true, force: true })
  reportFigures("contacts CSV ingest", databaseName(databaseUrl, serverVersion), figures)
}

main().then(() => process.exit(0), (error) => {
  console.error(error)
  process.exit(1)
})
