/**
 * Footprint of the embedded default: how long `npm start` takes to answer /api/v1/health on a data
 * dir that is already migrated (the first start, which creates and migrates the database, is run
 * once before and not counted), the CPU time spent until then, and, after the server has been idle
 * a while, the resident memory of every process `npm start` left running, with where the server's
 * memory goes.
 *
 *   npx tsx bench/footprint.ts                 # npm start, 3 timed starts
 *   BENCH_STARTS=5 npx tsx bench/footprint.ts
 *   BENCH_COMMAND="node bin/talkgraph.js serve" npx tsx bench/footprint.ts
 *   BENCH_CWD=/path/to/another/checkout npx tsx bench/footprint.ts   # the same figures for another tree
 *
 * The server's memory is split with a preloaded module (bench/support/memoryReport.mjs) that writes
 * its own process.memoryUsage() and its threads' heaps, and by starting the embedded database's
 * thread alone on the same data dir afterwards: what that thread holds (PGlite's WebAssembly memory
 * and compiled code) is the difference it makes to a bare Node process.
 */
import { spawn } from "node:child_process"
import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as net from "node:net"
import * as os from "node:os"
import * as path from "node:path"
import { databaseName, type Figure, reportFigures } from "./support/figures.ts"

const cwd = path.resolve(process.env.BENCH_CWD ?? path.join(import.meta.dirname, ".."))
const command = process.env.BENCH_COMMAND ?? "npm start"
const STARTS = Number(process.env.BENCH_STARTS ?? 3)
const IDLE_MS = Number(process.env.BENCH_IDLE_MS ?? 10_000)
const TARGET_START_MS = 2000
const TARGET_RSS_MB = 250
const CLOCK_TICKS = 100

const freePort = () =>
  new Promise<number>((resolve) => {
    const server = net.createServer().listen(0, "127.0.0.1", () => {
      const { port } = server.address() as net.AddressInfo
      server.close(() => resolve(port))
    })
  })

interface ProcessInfo {
  readonly pid: number
  readonly ppid: number
  readonly command: string
  readonly rssKb: number
  /** utime + stime + cutime + cstime: this process's CPU and that of the children it waited for. */
  readonly cpuMs: number
}

const processInfo = (pid: number): ProcessInfo | undefined => {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8")
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ")
    const status = fs.readFileSync(`/proc/${pid}/status`, "utf8")
    const rssKb = Number(status.match(/VmRSS:\s+(\d+)/)?.[1] ?? 0)
    const ticks = [11, 12, 13, 14].reduce((sum, at) => sum + Number(fields[at]), 0)
    const commandLine = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ").trim()
    return { pid, ppid: Number(fields[1]), command: commandLine, rssKb, cpuMs: (ticks * 1000) / CLOCK_TICKS }
  } catch {
    return undefined
  }
}

/** The process and every descendant still running. */
const processTree = (root: number): Array<ProcessInfo> => {
  const all = fs.readdirSync("/proc").filter((name) => /^\d+$/.test(name)).map((name) => processInfo(Number(name)))
    .filter((info): info is ProcessInfo => info !== undefined)
  const tree: Array<ProcessInfo> = []
  const visit = (pid: number) => {
    const info = all.find((candidate) => candidate.pid === pid)
    if (!info) return
    tree.push(info)
    for (const child of all.filter((candidate) => candidate.ppid === pid)) visit(child.pid)
  }
  visit(root)
  return tree
}

const healthy = async (port: number) => {
  try {
    return (await fetch(`http://127.0.0.1:${port}/api/v1/health`)).status === 200
  } catch {
    return false
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const memoryDir = await fsp.mkdtemp(path.join(os.tmpdir(), "talkgraph-footprint-memory-"))
const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), "talkgraph-footprint-"))

/** Starts the command; resolves once it answers health, with the time and the tree's CPU until then. */
const start = async (withMemoryReport: boolean) => {
  const port = await freePort()
  const started = performance.now()
  const [program, ...args] = command.split(" ")
  const child = spawn(program!, args, {
    cwd,
    env: {
      ...process.env,
      PORT: String(port),
      TALKGRAPH_DATA_DIR: dataDir,
      LOG_LEVEL: "error",
      ...(withMemoryReport
        ? {
          NODE_OPTIONS: `--import=${path.join(import.meta.dirname, "support", "memoryReport.mjs")}`,
          BENCH_MEMORY_DIR: memoryDir
        }
        : {})
    },
    stdio: ["ignore", "ignore", "inherit"]
  })
  while (!(await healthy(port))) {
    if (child.exitCode !== null) throw new Error(`${command} exited with ${child.exitCode}`)
    if (performance.now() - started > 600_000) throw new Error(`${command} did not answer in 10 minutes`)
    await sleep(10)
  }
  const ms = performance.now() - started
  const cpuMs = processTree(child.pid!).reduce((sum, info) => sum + info.cpuMs, 0)
  return { child, ms, cpuMs }
}

/** Stops the server (the deepest node process) as a supervisor would, and waits for the tree to end. */
const stop = async (child: ReturnType<typeof spawn>) => {
  const tree = processTree(child.pid!)
  for (const info of tree.reverse()) {
    try {
      process.kill(info.pid, "SIGTERM")
    } catch { /* gone already */ }
  }
  const deadline = performance.now() + 15_000
  while (child.exitCode === null && child.signalCode === null && performance.now() < deadline) await sleep(50)
}

console.log(`footprint of \`${command}\` in ${cwd}`)
const first = await start(false)
console.log(`first start (creates and migrates the database): ${(first.ms / 1000).toFixed(2)} s`)
await stop(first.child)

const starts: Array<{ ms: number; cpuMs: number }> = []
for (let i = 0; i < STARTS; i++) {
  const timed = await start(false)
  starts.push({ ms: timed.ms, cpuMs: timed.cpuMs })
  console.log(`start ${i + 1}: health after ${timed.ms.toFixed(0)} ms, ${timed.cpuMs.toFixed(0)} ms CPU`)
  await stop(timed.child)
}

const idle = await start(true)
await sleep(IDLE_MS)
const tree = processTree(idle.child.pid!)
console.log(`\nafter ${IDLE_MS / 1000} s idle, the processes \`${command}\` left running:`)
for (const info of tree) {
  console.log(`  ${String(info.pid).padStart(7)} ${(info.rssKb / 1024).toFixed(0).padStart(5)} MB  ${info.command}`)
}
const server = tree.find((info) => /talkgraph\.js|main\.js/.test(info.command)) ?? tree[tree.length - 1]!
// The database's thread alone is measured under the allocator settings the server ran with (e.g. MALLOC_MMAP_THRESHOLD_).
const allocatorEnv = Object.fromEntries(
  fs.readFileSync(`/proc/${server.pid}/environ`, "utf8").split("\0").filter((entry) =>
    /^(MALLOC_|GLIBC_TUNABLES=)/.test(entry)
  )
    .map((entry) => [entry.slice(0, entry.indexOf("=")), entry.slice(entry.indexOf("=") + 1)])
)
const report = JSON.parse(await fsp.readFile(path.join(memoryDir, `${server.pid}.json`), "utf8").catch(() => "null")) as
  | { rss: number; heapTotal: number; heapUsed: number; external: number; arrayBuffers: number }
  | null
await stop(idle.child)

/** The embedded database's thread alone on the same data dir, in a bare process. */
const databaseOnly = await new Promise<{ bare: number; withDatabase: number }>((resolve, reject) => {
  const worker = path.join(cwd, "dist", "layers", "db", "pgliteWorker.mjs")
  const script = `
    import { Worker } from "node:worker_threads"
    // As the server does once quiet (layers/memory): the allocator gives back what it freed.
    const trim = await import("koffi").then(
      ({ default: koffi }) => koffi.load("libc.so.6").func("int malloc_trim(size_t pad)"),
      () => () => 0
    )
    trim(0)
    const bare = process.memoryUsage().rss
    const worker = new Worker(${JSON.stringify(worker)}, { execArgv: [], workerData: {
      pgdata: ${JSON.stringify(path.join(dataDir, "pgdata"))},
      socketPath: ${JSON.stringify(path.join(memoryDir, ".s.PGSQL.5432"))}
    } })
    worker.once("message", () => setTimeout(() => {
      trim(0)
      console.log(JSON.stringify({ bare, withDatabase: process.memoryUsage().rss }))
      worker.postMessage("stop")
      worker.once("message", () => process.exit(0))
    }, 2000))`
  const child = spawn(process.execPath, ["--input-type=module", "-e", script], {
    cwd,
    env: { ...process.env, ...allocatorEnv },
    stdio: ["ignore", "pipe", "inherit"]
  })
  let out = ""
  child.stdout.on("data", (chunk) => (out += chunk))
  child.on("exit", () => {
    try {
      resolve(JSON.parse(out.trim().split("\n").pop()!))
    } catch (error) {
      reject(error)
    }
  })
})

const mb = (bytes: number) => Math.round(bytes / 1024 ** 2)
const sorted = [...starts].sort((a, b) => a.ms - b.ms)
const median = sorted[Math.floor(sorted.length / 2)]!
const serverRss = Math.round(server.rssKb / 1024)
const totalRss = Math.round(tree.reduce((sum, info) => sum + info.rssKb, 0) / 1024)
const databaseMb = mb(databaseOnly.withDatabase - databaseOnly.bare)
if (report) {
  console.log(
    `\nwhere the server's ${serverRss} MB go: JavaScript heap of the main thread ${mb(report.heapTotal)} MB ` +
      `(${mb(report.heapUsed)} MB used), buffers outside it ${mb(report.external)} MB; ` +
      `the embedded database's thread (PGlite's WebAssembly memory, compiled code and heap) ~${databaseMb} MB; ` +
      `the rest (Node itself, loaded code, native libraries, the other threads) ~${
        Math.max(0, serverRss - mb(report.heapTotal) - databaseMb)
      } MB`
  )
}

const figures: Array<Figure> = [
  { name: "start to health, median", value: Math.round(median.ms), unit: "ms", target: `<= ${TARGET_START_MS}` },
  { name: "start to health, best", value: Math.round(sorted[0]!.ms), unit: "ms" },
  { name: "CPU until health (all processes), median", value: Math.round(median.cpuMs), unit: "ms" },
  { name: "idle RSS, server process", value: serverRss, unit: "MB", target: `<= ${TARGET_RSS_MB}` },
  { name: "idle RSS, every process left running", value: totalRss, unit: "MB" },
  { name: "processes left running", value: tree.length, unit: "" },
  ...(report
    ? [
      { name: "  main thread JS heap (total)", value: mb(report.heapTotal), unit: "MB" },
      { name: "  embedded database thread", value: databaseMb, unit: "MB" }
    ]
    : [])
]
reportFigures("footprint of the embedded default", databaseName(undefined), figures)
await fsp.rm(dataDir, { recursive: true, force: true })
await fsp.rm(memoryDir, { recursive: true, force: true })
