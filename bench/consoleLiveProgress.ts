/**
 * The live campaign page's update delay: from a call ending at the carrier (the server's event) to
 * the page showing the new "Completed" count, in this machine's headless Chromium (target ≤ 500
 * ms p95). A campaign of CALLS contacts is dialled one call at a time through the loopback Twilio;
 * each call talks for a second. The page records when each count appears (a MutationObserver,
 * wall clock); the carrier records when each call ended. Run by bench/console.ts.
 */
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { Browser } from "playwright-core"
import { client } from "../test/support/client.ts"
import { carrierTelephony } from "../test/support/dialerFixtures.ts"
import { startFakeTwilio } from "../test/support/fakeTwilio.ts"
import { startInProcessServer } from "../test/support/inProcessServer.ts"
import { uploadCsv } from "../test/support/uploads.ts"
import { ensureVoiceModels } from "../test/support/voiceFixtures.ts"

const CALLS = 20

const percentile = (values: ReadonlyArray<number>, p: number) =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil((p / 100) * values.length) - 1)]!

export const measureLiveProgress = async (browser: Browser) => {
  const carrier = await startFakeTwilio({ script: () => ({ outcome: "completed", ringMs: 50, talkMs: 1_000 }) })
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-live-"))
  const admin = { email: "live-admin@example.test", password: "live-admin-password" }
  const server = await startInProcessServer({
    TALKGRAPH_DATA_DIR: dataDir,
    LOG_LEVEL: "error",
    TALKGRAPH_ADMIN_EMAIL: admin.email,
    TALKGRAPH_ADMIN_PASSWORD: admin.password,
    TALKGRAPH_SCHEDULER_POLL_MS: "200"
  })
  try {
    const api = client(server.url)
    const login = (await api.post("/api/v1/auth/login", admin)).body
    const credentials = { token: login.token as string }
    await ensureVoiceModels(api, credentials)
    await carrierTelephony(api, credentials, carrier)
    const agent = await api.post("/api/v1/workflow/create/definition", {
      name: "Live bench",
      workflow_definition: {
        nodes: [
          {
            id: "start",
            type: "startCall",
            position: { x: 0, y: 0 },
            data: { name: "Start", prompt: "Greet.", greeting: "Hi" }
          },
          { id: "end", type: "endCall", position: { x: 0, y: 200 }, data: { name: "End", prompt: "Goodbye." } }
        ],
        edges: [{ id: "e", source: "start", target: "end", data: { label: "Done", condition: "Always" } }]
      }
    }, credentials)
    const numbers = Array.from({ length: CALLS }, (_, index) => `+1415444${String(index).padStart(4, "0")}`)
    const sourceId = await uploadCsv(api, credentials, `phone_number\n${numbers.join("\n")}\n`)
    const campaign = await api.post("/api/v1/campaign/create", {
      name: "Live bench",
      workflow_id: agent.body.id,
      source_type: "csv",
      source_id: sourceId,
      max_concurrency: 1,
      rate_limit_per_second: 5
    }, credentials)
    if (campaign.status !== 200) throw new Error(`campaign: ${JSON.stringify(campaign.body)}`)

    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await context.addInitScript((session) => {
      ;(globalThis as any).localStorage.setItem("talkgraph.session", session)
    }, JSON.stringify(login))
    const page = await context.newPage()
    await page.goto(`${server.url}/campaigns/${campaign.body.id}`)
    await page.locator("[data-count=completed]").waitFor()
    // The page's own record of when each count was drawn.
    await page.evaluate(() => {
      const browserGlobal = globalThis as any
      const shown: Array<{ value: number; at: number }> = []
      browserGlobal.completedShown = shown
      const target = browserGlobal.document.querySelector("[data-count=completed]")
      new browserGlobal.MutationObserver(() => shown.push({ value: Number(target.textContent), at: Date.now() }))
        .observe(target, { childList: true, characterData: true, subtree: true })
    })
    const started = await api.post(`/api/v1/campaign/${campaign.body.id}/start`, undefined, credentials)
    if (started.status !== 200) throw new Error(`start: ${JSON.stringify(started.body)}`)
    await page.getByLabel("State: completed").waitFor({ timeout: CALLS * 5_000 })
    const shown: Array<{ value: number; at: number }> = await page.evaluate(() => (globalThis as any).completedShown)
    const ended = carrier.calls().map((call) => call.endedAt!).sort((a, b) => a - b)
    const delays = ended.map((at, index) => shown.find((entry) => entry.value >= index + 1)!.at - at)
    await context.close()
    return `live campaign page, call ended → count on screen: p50 ${percentile(delays, 50)} ms, p95 ${
      percentile(delays, 95)
    } ms, max ${Math.max(...delays)} ms over ${delays.length} calls (target ≤ 500 ms p95)`
  } finally {
    await server.close()
    await carrier.close()
    await fs.rm(dataDir, { recursive: true, force: true })
  }
}
