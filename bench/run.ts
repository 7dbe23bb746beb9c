/**
 * Runs the benchmarks, every one or those named, each in a process of its own, and prints one
 * table of their figures (with the target each is held to) and the machine they ran on.
 *
 *   npm run bench                      # every benchmark, embedded PGlite (hours on a small machine)
 *   npm run bench -- usage footprint   # those whose name contains "usage" or "footprint"
 *   DATABASE_URL=postgres://… npm run bench -- usage csv
 *   npm run bench -- --list
 *
 * A benchmark hands its figures over with `reportFigures` (bench/support/figures.ts); one that
 * prints only its own text is listed in the table by its outcome, its figures above it.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import pg from "pg"
import { type Figure, machine, meetsTarget } from "./support/figures.ts"

interface Benchmark {
  readonly name: string
  /** What it measures, for --list. */
  readonly about: string
  /** Node flags it needs. */
  readonly nodeFlags?: ReadonlyArray<string>
}

const benchmarks: ReadonlyArray<Benchmark> = [
  { name: "footprint", about: "npm start: time to health, CPU, idle RSS of every process, where memory goes" },
  { name: "usageQueries", about: "usage report p50/p95 per filter combination (every one of the nine filters)" },
  { name: "csvIngest", about: "contacts CSV ingest: rows/s, RSS and heap growth at 100k and 1M rows" },
  { name: "importConcurrency", about: "a large import beside other organizations' requests" },
  { name: "foundation", about: "cold start and requests per second" },
  { name: "campaignDispatch", about: "calls placed per second with exact rate and concurrency limits" },
  { name: "voiceCalls", about: "simultaneous voice calls at real time" },
  {
    name: "mediaTransportFloor",
    about: "a browser call's media transport alone, no framework: the floor under voice capacity"
  },
  { name: "vadThroughput", about: "Silero VAD windows per second" },
  {
    name: "voicemailDetection",
    about: "in-call answering-machine detection: accuracy and time to decision on 44 clips"
  },
  { name: "chatTurnOverhead", about: "server time per chat message beyond the LLM's" },
  { name: "chatTransport", about: "the chat client's streaming transport" },
  { name: "eventStreamParse", about: "event-stream parsing" },
  { name: "templateOverhead", about: "template creation overhead" },
  { name: "largeBodies", about: "1 GiB request bodies" },
  { name: "loginThrottle", about: "login throttle under a burst" },
  { name: "providerReplyMemory", about: "memory while providers send enormous replies", nodeFlags: ["--expose-gc"] },
  { name: "recordingTranscode", about: "clip transcoding time and event-loop stalls" },
  { name: "console", about: "the console's JavaScript size and first render" },
  { name: "consoleLiveProgress", about: "the live campaign page's update delay" }
]

const args = process.argv.slice(2)
if (args.includes("--list")) {
  for (const benchmark of benchmarks) console.log(`${benchmark.name.padEnd(22)}${benchmark.about}`)
  process.exit(0)
}
const chosen = args.length === 0
  ? benchmarks
  : benchmarks.filter((benchmark) => args.some((arg) => benchmark.name.toLowerCase().includes(arg.toLowerCase())))
if (chosen.length === 0) {
  console.error(`No benchmark matches ${args.join(", ")}; \`npm run bench -- --list\` lists them.`)
  process.exit(1)
}
const missing = chosen.filter((benchmark) => !fs.existsSync(path.join(import.meta.dirname, `${benchmark.name}.ts`)))
if (missing.length > 0) {
  console.error(`Missing benchmark files: ${missing.map((benchmark) => benchmark.name).join(", ")}`)
  process.exit(1)
}

const databaseUrl = process.env.DATABASE_URL
const databaseDescription = async () => {
  if (!databaseUrl) {
    const version = JSON.parse(
      await fsp.readFile(
        path.join(import.meta.dirname, "..", "node_modules", "@electric-sql", "pglite", "package.json"),
        "utf8"
      )
    ).version
    return `PGlite ${version} (embedded)`
  }
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    const { rows } = await client.query<{ server_version: string }>("SHOW server_version")
    const host = new URL(databaseUrl).hostname
    return `PostgreSQL ${rows[0]?.server_version} on ${host}`
  } finally {
    await client.end()
  }
}

interface Reported {
  readonly benchmark: string
  readonly database: string
  readonly figures: ReadonlyArray<Figure>
}

const host = machine()
const database = await databaseDescription()
const header = `${host.cores} cores (${host.cpu}), ${host.memoryGiB} GiB, Node ${host.node}, ${database}`
console.log(`benchmarks: ${chosen.map((benchmark) => benchmark.name).join(", ")}\nmachine: ${header}\n`)

const figuresDir = await fsp.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-figures-"))
const outcomes: Array<{ name: string; code: number | null; seconds: number; reported: Array<Reported> }> = []
for (const benchmark of chosen) {
  const figuresFile = path.join(figuresDir, `${benchmark.name}.jsonl`)
  console.log(`\n=== ${benchmark.name}: ${benchmark.about}`)
  const started = performance.now()
  const code = await new Promise<number | null>((resolve) => {
    const child = spawn(
      process.execPath,
      [...(benchmark.nodeFlags ?? []), "--import", "tsx", path.join(import.meta.dirname, `${benchmark.name}.ts`)],
      { stdio: "inherit", env: { ...process.env, BENCH_FIGURES_FILE: figuresFile } }
    )
    child.on("exit", (exitCode) => resolve(exitCode))
  })
  const lines = await fsp.readFile(figuresFile, "utf8").catch(() => "")
  const reported = lines.split("\n").filter((line) => line.trim() !== "").map((line) => JSON.parse(line) as Reported)
  outcomes.push({ name: benchmark.name, code, seconds: (performance.now() - started) / 1000, reported })
}
await fsp.rm(figuresDir, { recursive: true, force: true })

const rows: Array<[string, string, string, string, string]> = []
for (const outcome of outcomes) {
  if (outcome.code !== 0) {
    rows.push([outcome.name, `FAILED (exit ${outcome.code})`, "", "", ""])
    continue
  }
  if (outcome.reported.length === 0) {
    rows.push([outcome.name, `figures printed above (${outcome.seconds.toFixed(0)} s)`, "", "", ""])
    continue
  }
  for (const report of outcome.reported) {
    for (const figure of report.figures) {
      const met = meetsTarget(figure)
      rows.push([
        report.benchmark,
        figure.name,
        `${figure.value} ${figure.unit}`.trim(),
        figure.target ?? "",
        met === undefined ? "" : met ? "ok" : "MISSED"
      ])
    }
  }
}
const widths = [0, 1, 2, 3, 4].map((column) =>
  Math.max(...rows.map((row) => row[column]!.length), ["benchmark", "figure", "value", "target", ""][column]!.length)
)
const line = (cells: ReadonlyArray<string>) =>
  cells.map((cell, column) => (column === 2 ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!))).join("  ")
console.log(`\n\nmachine: ${header}; load average now ${os.loadavg()[0]!.toFixed(1)}`)
console.log(line(["benchmark", "figure", "value", "target", ""]))
console.log(widths.map((width) => "-".repeat(width)).join("  "))
for (const row of rows) console.log(line(row))
const failed = outcomes.filter((outcome) => outcome.code !== 0)
process.exit(failed.length > 0 ? 1 : 0)
