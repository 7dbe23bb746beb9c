/**
 * The web console: the initial JavaScript a browser downloads (gzip; target ≤ 250 KB, the graph
 * editor loading on demand), and time to interactive in this machine's headless Chromium of the
 * agents page (50 agents) and of the editor holding a 200-node graph (target ≤ 1 s each). Time to
 * interactive here: from navigation until the page shows its data and answers input (the search
 * box filters; the editor's nodes are drawn and its toolbar is enabled). Median of 5 loads each.
 * Then the live campaign page's update delay (bench/consoleLiveProgress.ts; target ≤ 500 ms p95).
 *
 *   npx tsx bench/console.ts
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import * as zlib from "node:zlib"
import { consoleBuildDir } from "../http/consoleBuildDir.ts"
import { hasChromium, launchChromium } from "../test/support/browser.ts"
import { startInProcessServer } from "../test/support/inProcessServer.ts"
import { buildConsoleIfStale } from "../web/tooling/buildIfStale.mjs"
import { measureLiveProgress } from "./consoleLiveProgress.ts"

const LOADS = 5
const AGENTS = 50
const GRAPH_NODES = 200

const kb = (bytes: number) => `${(bytes / 1024).toFixed(1)} KB`
const median = (values: Array<number>) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

buildConsoleIfStale()
const dist = consoleBuildDir()
const index = await fs.readFile(path.join(dist, "index.html"), "utf8")
const gzipped = async (file: string) => zlib.gzipSync(await fs.readFile(path.join(dist, file)), { level: 9 }).length
const initialScripts = [...index.matchAll(/(?:src|href)="\/(assets\/[^"]+\.js)"/g)].map((found) => found[1]!)
const initial = (await Promise.all(initialScripts.map(gzipped))).reduce((sum, size) => sum + size, 0)
const allScripts = (await fs.readdir(path.join(dist, "assets"))).filter((name) => name.endsWith(".js"))
const onDemand = allScripts.filter((name) => !initialScripts.includes(`assets/${name}`))
const lazy = (await Promise.all(onDemand.map((name) => gzipped(`assets/${name}`)))).reduce((sum, size) => sum + size, 0)
console.log(`load average ${os.loadavg().map((load) => load.toFixed(1)).join(" ")} on ${os.cpus().length} cores`)
console.log(`initial JS (gzip): ${kb(initial)} in ${initialScripts.length} file(s) (target ≤ 250 KB)`)
console.log(`loaded on demand (gzip): ${kb(lazy)} in ${onDemand.length} file(s) (the graph editor)`)

if (!hasChromium) {
  console.log("No Chromium at /usr/bin/chromium: time to interactive not measured (apt-get install -y chromium).")
  process.exit(0)
}

const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-"))
const admin = { email: "bench-admin@example.test", password: "bench-admin-password" }
const server = await startInProcessServer({
  TALKGRAPH_DATA_DIR: dataDir,
  LOG_LEVEL: "error",
  TALKGRAPH_ADMIN_EMAIL: admin.email,
  TALKGRAPH_ADMIN_PASSWORD: admin.password
})

const call = async (method: string, route: string, token: string | undefined, body?: unknown): Promise<any> => {
  const response = await fetch(`${server.url}${route}`, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? null : JSON.stringify(body)
  })
  const parsed: any = await response.json()
  if (!response.ok) throw new Error(`${method} ${route}: ${response.status} ${JSON.stringify(parsed)}`)
  return parsed
}

/** A start, a chain of agent steps, an end and a global node: `size` nodes in all, every one valid. */
const graphOf = (size: number) => {
  const steps = size - 3
  const node = (id: string, type: string, index: number, name: string) => ({
    id,
    type,
    position: { x: (index % 10) * 260, y: Math.floor(index / 10) * 160 },
    data: { name, prompt: `Prompt of ${name}: ask the next question politely.` }
  })
  const nodes = [
    { ...node("start", "startCall", 0, "Start"), data: { name: "Start", prompt: "Greet.", greeting: "Hello!" } },
    ...Array.from({ length: steps }, (_, i) => node(`step-${i}`, "agentNode", i + 1, `Step ${i}`)),
    node("end", "endCall", steps + 1, "End"),
    node("global", "globalNode", steps + 2, "Persona")
  ]
  const chain = ["start", ...Array.from({ length: steps }, (_, i) => `step-${i}`), "end"]
  const edges = chain.slice(1).map((target, i) => ({
    id: `edge-${i}`,
    source: chain[i]!,
    target,
    data: { label: `Next ${i}`, condition: "The caller answered" }
  }))
  return { nodes, edges }
}

try {
  const login = await call("POST", "/api/v1/auth/login", undefined, admin)
  for (let i = 0; i < AGENTS; i++) {
    await call("POST", "/api/v1/workflow/create/definition", login.token, {
      name: `Agent ${i}`,
      workflow_definition: graphOf(6)
    })
  }
  const big = await call("POST", "/api/v1/workflow/create/definition", login.token, {
    name: "Big graph",
    workflow_definition: graphOf(GRAPH_NODES)
  })

  const browser = await launchChromium()
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  await context.addInitScript((session) => {
    ;(globalThis as any).localStorage.setItem("talkgraph.session", session)
  }, JSON.stringify(login))
  const page = await context.newPage()

  const timeLoads = async (route: string, ready: () => Promise<void>) => {
    const times: Array<number> = []
    for (let i = 0; i < LOADS; i++) {
      const started = performance.now()
      await page.goto(`${server.url}${route}`)
      await ready()
      times.push(performance.now() - started)
    }
    return times
  }

  const agents = await timeLoads("/agents", async () => {
    await page.locator("tbody tr").first().waitFor()
    await page.getByLabel("Search").fill("Agent 7")
    await page.locator("tbody tr", { hasText: "Agent 7" }).first().waitFor()
  })
  const editor = await timeLoads(`/agents/${big.id}`, async () => {
    await page.locator(".react-flow__node").first().waitFor()
    await page.getByRole("button", { name: "Publish" }).waitFor({ state: "visible" })
    await page.getByRole("button", { name: "+ Agent step" }).click()
  })
  console.log(
    `agents page (${AGENTS} agents), time to interactive: median ${median(agents).toFixed(0)} ms (target ≤ 1000 ms; ${
      agents.map((t) => t.toFixed(0)).join(", ")
    })`
  )
  console.log(
    `editor (${GRAPH_NODES}-node graph), time to interactive: median ${
      median(editor).toFixed(0)
    } ms (target ≤ 1000 ms; ${editor.map((t) => t.toFixed(0)).join(", ")})`
  )
  console.log(await measureLiveProgress(browser))
  await browser.close()
} finally {
  await server.close()
  await fs.rm(dataDir, { recursive: true, force: true })
}
