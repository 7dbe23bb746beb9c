import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestAccount } from "./support/accounts.ts"
import { hasChromium, launchChromium, screenshot, seriousViolations } from "./support/browser.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony } from "./support/dialerFixtures.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer, TEST_ADMIN } from "./support/server.ts"
import { uploadCsv } from "./support/uploads.ts"
import { useVoiceModels, voiceDefinition } from "./support/voiceFixtures.ts"

if (!hasChromium) {
  console.warn(
    "Skipping the campaign pages' browser tests: no Chromium at /usr/bin/chromium (apt-get install -y chromium)."
  )
}

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let deepgram: FakeDeepgram
let speech: FakeSpeechApis
let carrier: FakeTwilio
let browser: Browser
let page: Page
let csvFile: string
let adminToken: string
let agentId: number

const numbers = ["+14155550181", "+14155550182"]

/** No serious or critical accessibility problem on the page as it is, and a screenshot of it. */
const checkPage = async (name: string) => {
  await screenshot(page, name)
  expect(await seriousViolations(page), `axe violations on ${name}`).toEqual([])
}

const count = (name: string) => page.locator(`[data-count="${name}"]`).textContent()

describe.skipIf(!hasChromium)("campaigns in the console, in Chromium", () => {
  beforeAll(async () => {
    ;[llm, deepgram, speech, carrier] = await Promise.all([
      startScriptedLlm(),
      startFakeDeepgram(),
      startFakeSpeechApis(),
      startFakeTwilio()
    ])
    // Its own database: this server dials the campaigns it sees.
    server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: "200" }, { ownDatabase: true })
    api = client(server.url)
    const login = await api.post("/api/v1/auth/login", TEST_ADMIN)
    const admin = { token: login.body.token as string } as TestAccount
    await useVoiceModels(api, admin, { llmUrl: llm.baseUrl, deepgram, tts: speech })
    await carrierTelephony(api, { token: admin.token }, carrier)
    adminToken = admin.token
    agentId = await createWorkflow(api, server, admin, voiceDefinition())
    // Each callee listens to the greeting and hangs up: a short call with both sides recorded.
    for (const number of numbers) {
      carrier.calleeScript(number, [{ waitForAgent: { quietMs: 600, timeoutMs: 15_000 } }, { hangUp: true }])
    }
    csvFile = path.join(await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-csv-")), "spring-leads.csv")
    await fs.writeFile(
      csvFile,
      `phone_number,first_name,company\n${numbers[0]},Dana,"Acme, Inc."\n${
        numbers[1]
      },Lee,Globex\nnot-a-number,Sam,Initech\n`
    )
    browser = await launchChromium()
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    page.setDefaultTimeout(15_000)
    await page.goto(`${server.url}/`)
    await page.getByLabel("Email").fill(TEST_ADMIN.email)
    await page.getByLabel("Password").fill(TEST_ADMIN.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Agents" }).waitFor()
  }, 60_000)
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await Promise.all([llm?.close(), deepgram?.close(), speech?.close(), carrier?.close()])
  })

  it("lists no campaigns yet and says how to start one", async () => {
    await page.getByRole("link", { name: "Campaigns" }).click()
    await page.getByText("No campaigns yet.").waitFor()
    await checkPage("campaigns-01-empty")
  })

  it("uploads a CSV in the wizard with a preview of its first rows, and shows field errors beside their fields", async () => {
    await page.getByRole("link", { name: "New campaign" }).first().click()
    await page.getByRole("heading", { name: "New campaign" }).waitFor()
    await page.getByLabel("CSV file").setInputFiles(csvFile)
    await page.getByText("spring-leads.csv uploaded").waitFor()
    const preview = page.getByRole("table", { name: "First rows of the file" })
    expect(await preview.locator("th").allTextContents()).toEqual(["phone_number", "first_name", "company"])
    expect(await preview.locator("tbody tr").first().locator("td").allTextContents()).toEqual([
      numbers[0],
      "Dana",
      "Acme, Inc."
    ])
    expect(await page.getByLabel("Name").inputValue()).toBe("spring-leads")
    // The API's defaults are what the wizard starts from.
    expect(await page.getByLabel("Calls per second").inputValue()).toBe("1")
    expect(await page.getByLabel("Retries per contact").inputValue()).toBe("2")
    expect(await page.getByLabel("Failed share that pauses (0 to 1)").inputValue()).toBe("0.5")

    await page.getByLabel("Agent").selectOption({ label: "Chat agent" })
    await page.getByLabel("Calls at once").fill("1")
    await page.getByLabel("Seconds between attempts").fill("5")
    await page.getByRole("button", { name: "Create campaign" }).click()
    const fieldProblem = page.locator("label", { hasText: "Seconds between attempts" }).locator(".field-problem")
    await fieldProblem.waitFor()
    expect(await fieldProblem.textContent()).toMatch(/30/)
    await page.getByRole("alert").waitFor()
    await checkPage("campaigns-02-wizard")
    await page.getByLabel("Seconds between attempts").fill("60")
    await page.getByRole("button", { name: "Create campaign" }).click()
    await page.getByRole("heading", { name: "spring-leads" }).waitFor()
    expect(page.url()).toMatch(/\/campaigns\/\d+$/)
    // The row without a usable number was skipped, and the page says so.
    expect(await page.locator(".notice").textContent()).toMatch(/not-a-number|invalid/i)
  })

  it("starts the campaign and shows its progress live until it completes", async () => {
    await page.locator("[data-count=queued]").waitFor()
    expect(await count("queued")).toBe("2")
    expect(await count("completed")).toBe("0")
    await checkPage("campaigns-03-created")
    await page.getByRole("button", { name: "Start" }).click()
    await page.getByRole("button", { name: "Pause" }).waitFor()
    await page.getByRole("button", { name: "Pause" }).click()
    await page.getByRole("button", { name: "Resume" }).waitFor()
    await page.getByRole("button", { name: "Resume" }).click()
    await page.getByRole("button", { name: "Pause" }).waitFor()

    // The counts change on screen without a reload: one call completes while the other waits.
    await page.waitForFunction(
      () => (globalThis as any).document.querySelector("[data-count=completed]")?.textContent === "1",
      undefined,
      { timeout: 30_000 }
    )
    // The other contact is queued or being called meanwhile.
    expect(await count("queued")).not.toBe("2")
    await checkPage("campaigns-04-running")
    await page.getByLabel("State: completed").waitFor({ timeout: 40_000 })
    expect(await count("completed")).toBe("2")
    expect(await count("queued")).toBe("0")
    expect(await count("live")).toBe("0")
    await page.locator("table a", { hasText: "#" }).nth(1).waitFor()
    expect(await page.locator("table a", { hasText: "#" }).count()).toBe(2)
    await checkPage("campaigns-05-completed")
  }, 90_000)

  it("downloads the report and opens a call's conversation, whose recording plays", async () => {
    const downloading = page.waitForEvent("download")
    await page.getByRole("button", { name: "Download report (CSV)" }).click()
    const report = await downloading
    const text = await fs.readFile((await report.path())!, "utf8")
    expect(text.split("\n")[0]).toMatch(/phone_number/)
    expect(text).toContain(numbers[0]!.slice(1))

    await page.locator("table a", { hasText: "#" }).first().click()
    await page.getByRole("heading", { name: "Transcript" }).waitFor()
    expect(page.url()).toMatch(/\/runs\/\d+$/)
    const audio = page.locator("audio")
    await audio.waitFor()
    await page.waitForFunction(
      () => {
        const element = (globalThis as any).document.querySelector("audio")
        return element && element.readyState >= 1 && element.duration > 0
      },
      undefined,
      { timeout: 15_000 }
    )
    expect(await audio.evaluate((element: any) => element.duration)).toBeGreaterThan(0.5)
    await checkPage("campaigns-06-conversation")
  })

  it("says in words when live progress is cut off, and when a command arrives after the state changed elsewhere", async () => {
    const sourceId = await uploadCsv(api, { token: adminToken }, `phone_number\n+14155550189\n`)
    const created = await api.post("/api/v1/campaign/create", {
      name: "Stale page",
      workflow_id: agentId,
      source_type: "csv",
      source_id: sourceId
    }, { token: adminToken })
    // The page cannot follow the campaign: what it shows may be out of date, and it says so.
    await page.route("**/progress/stream", (route) => route.abort("connectionreset"))
    await page.goto(`${server.url}/campaigns/${created.body.id}`)
    await page.getByText(/Live progress is unavailable/).waitFor()
    const cancelled = await api.post(`/api/v1/campaign/${created.body.id}/cancel`, undefined, { token: adminToken })
    expect(cancelled.status).toBe(200)
    await page.getByRole("button", { name: "Cancel" }).click()
    await page.getByText(/Cannot cancel a campaign that is cancelled/).waitFor()
    await page.unroute("**/progress/stream")
  })

  it("lists the campaign with its state and progress", async () => {
    await page.getByRole("link", { name: "Campaigns" }).click()
    const row = page.locator("tbody tr", { hasText: "spring-leads" })
    await row.waitFor()
    expect(await row.textContent()).toMatch(/completed.*2 of 2 contacts done.*Chat agent/)
    await page.setViewportSize({ width: 768, height: 1024 })
    await checkPage("campaigns-07-list-tablet")
    await page.setViewportSize({ width: 1280, height: 800 })
  })
})
