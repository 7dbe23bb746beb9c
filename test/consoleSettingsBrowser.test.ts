import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sine, wavFile } from "./support/audioClips.ts"
import { hasChromium, launchChromium, screenshot, seriousViolations } from "./support/browser.ts"
import { type Client, client } from "./support/client.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer, TEST_ADMIN, uniqueEmail } from "./support/server.ts"
import { runnableDefinition } from "./support/workflowGraphs.ts"

if (!hasChromium) {
  console.warn("Skipping the console's settings tests: no Chromium at /usr/bin/chromium (apt-get install -y chromium).")
}

let server: RunningServer
let llm: ScriptedLlm
let speech: FakeSpeechApis
let browser: Browser
let page: Page
let api: Client
let adminToken: string
let agentId: number

const WIDE = { width: 1280, height: 800 }
const TABLET = { width: 768, height: 1024 }

/** The page at 1280×800 and at 768×1024: screenshots, no serious axe violation, nothing wider than the screen. */
const checkPage = async (name: string) => {
  for (const [size, viewport] of [["1280", WIDE], ["768", TABLET]] as const) {
    await page.setViewportSize(viewport)
    await screenshot(page, `settings-${name}-${size}`)
    expect(await seriousViolations(page), `axe violations on ${name} at ${size}px`).toEqual([])
    const overflow = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement
      return root.scrollWidth - root.clientWidth
    })
    expect(overflow, `${name} at ${size}px is wider than the window`).toBeLessThanOrEqual(0)
  }
  await page.setViewportSize(WIDE)
}

const signIn = async (target: Page, email: string, password: string) => {
  await target.goto(`${server.url}/`)
  await target.getByLabel("Email").fill(email)
  await target.getByLabel("Password").fill(password)
  await target.getByRole("button", { name: "Sign in" }).click()
  await target.getByRole("heading", { name: "Agents" }).waitFor()
}

const settingsSection = (name: string) => page.getByRole("navigation", { name: "Settings" }).getByRole("link", { name })

describe.skipIf(!hasChromium)("the console's settings in Chromium", () => {
  beforeAll(async () => {
    llm = await startScriptedLlm()
    speech = await startFakeSpeechApis()
    // The bootstrapped admin's organization is the one under test: on PostgreSQL it gets a database of its own.
    server = await startServer({}, { ownDatabase: true })
    api = client(server.url)
    adminToken = (await api.post("/api/v1/auth/login", TEST_ADMIN)).body.token
    const agent = await api.post("/api/v1/workflow/create/definition", {
      name: "Front desk",
      workflow_definition: runnableDefinition()
    }, { token: adminToken })
    expect(agent.status).toBe(200)
    agentId = agent.body.id
    browser = await launchChromium()
    page = await browser.newPage({ viewport: WIDE })
    page.setDefaultTimeout(15_000)
    page.on("dialog", (dialog) => void dialog.accept())
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await llm?.close()
    await speech?.close()
  })

  it("shows the organization's name in the top bar and opens Settings from it", async () => {
    await signIn(page, TEST_ADMIN.email, TEST_ADMIN.password)
    await page.locator(".organization", { hasText: "Admin" }).waitFor()
    expect(await page.locator(".organization").textContent()).not.toMatch(/Organization \d/)
    await page.getByRole("navigation", { name: "Sections" }).getByRole("link", { name: "Settings" }).click()
    await page.getByRole("heading", { name: "Models" }).waitFor()
    expect(page.url()).toMatch(/\/settings$/)
    await checkPage("models-empty")
  })

  it("saves an LLM pointing at the loopback model, tests it, and shows a failing one's error in words", async () => {
    const llmForm = page.getByRole("region", { name: "Language model" })
    await llmForm.getByLabel("Model").fill("scripted-model")
    await llmForm.getByLabel("Base URL").fill(llm.baseUrl)
    await llmForm.getByLabel("API key").fill("sk-test-key-123456")
    await llmForm.getByRole("button", { name: "Save" }).click()
    await llmForm.getByText("Saved.").waitFor()
    expect(await llmForm.getByText("Stored: ****3456").count()).toBeGreaterThan(0)

    llm.enqueue(reply.content("Hello from the loopback model."))
    await llmForm.getByRole("button", { name: "Test language model" }).click()
    await llmForm.getByText("Hello from the loopback model.").waitFor()
    expect(await llmForm.locator(".check-result").textContent()).toMatch(
      /The model answered \(openai scripted-model, \d+ ms\)/
    )

    // Saved again without typing the key: the masked value is not sent back, and the stored key stays.
    await llmForm.getByLabel("Model").fill("scripted-model-2")
    await llmForm.getByRole("button", { name: "Save" }).click()
    await llmForm.getByText("Saved.").waitFor()
    llm.enqueue(reply.error(500))
    await llmForm.getByRole("button", { name: "Test language model" }).click()
    const alert = llmForm.getByRole("alert")
    await alert.waitFor()
    expect(await alert.textContent()).toBe(
      "The LLM provider (openai) could not be used; the server log has the details"
    )
    expect(llm.requests.at(-1)!.headers.authorization).toBe("Bearer sk-test-key-123456")
    expect(llm.requests.at(-1)!.body.model).toBe("scripted-model-2")

    // A new address without the key again: the page says the stored key will not follow it.
    await llmForm.getByLabel("Base URL").fill("http://127.0.0.1:9/v1")
    await llmForm.getByText("The stored key is never sent to a different provider or address").waitFor()
    await llmForm.getByLabel("Base URL").fill(llm.baseUrl)

    const ttsForm = page.getByRole("region", { name: "Text to speech" })
    await ttsForm.getByLabel("Provider").selectOption("elevenlabs")
    await ttsForm.getByLabel("Base URL").fill(speech.url)
    await ttsForm.getByLabel("API key").fill(speech.apiKey)
    await ttsForm.getByLabel("Voice", { exact: true }).fill("test-voice")
    await ttsForm.getByRole("button", { name: "Save" }).click()
    await ttsForm.getByText("Saved.").waitFor()
    await ttsForm.getByRole("button", { name: "Test text to speech" }).click()
    const clip = ttsForm.getByLabel("The test phrase")
    await clip.waitFor()
    const seconds = await clip.evaluate((element: any) =>
      new Promise<number>((resolve) => {
        if (element.readyState >= 1) resolve(element.duration)
        else element.addEventListener("loadedmetadata", () => resolve(element.duration))
      })
    )
    expect(seconds).toBeGreaterThan(0.5)
    expect(await ttsForm.locator(".check-result").textContent()).toMatch(
      /Spoken \(elevenlabs, \d+ ms\): [\d.]+ s of audio/
    )
    await checkPage("models")
  })

  it("creates a telephony configuration, asks for its secret again when its address changes, and routes a number to an agent", async () => {
    await settingsSection("Telephony").click()
    await page.getByText("No telephony configuration yet").waitFor()
    await checkPage("telephony-empty")
    await page.getByRole("button", { name: "New configuration" }).click()
    await page.getByLabel("Name").fill("Twilio test")
    await page.getByLabel("Account SID").fill("AC0123456789abcdef0123456789abcdef")
    await page.getByLabel("Auth token").fill("twilio-secret-token-0001")
    await page.getByLabel("API base URL (optional)").fill("http://127.0.0.1:9")
    await page.getByRole("button", { name: "Create" }).click()
    const row = page.getByRole("row", { name: /Twilio test/ })
    await row.waitFor()

    await row.getByRole("button", { name: "Edit" }).click()
    await page.getByRole("heading", { name: "Edit Twilio test" }).waitFor()
    expect(await page.getByLabel("Auth token").inputValue()).toBe("")
    await page.getByLabel("API base URL (optional)").fill("http://127.0.0.1:10")
    await page.getByRole("button", { name: "Save", exact: true }).click()
    const refusal = page.locator(".field-problem").first()
    await refusal.waitFor()
    expect(await refusal.textContent()).toMatch(/auth_token|secret/i)
    await screenshot(page, "settings-telephony-secret-again")
    await page.getByLabel("Auth token").fill("twilio-secret-token-0001")
    await page.getByRole("button", { name: "Save", exact: true }).click()
    await page.getByRole("heading", { name: "Edit Twilio test" }).waitFor({ state: "detached" })

    await row.getByRole("button", { name: "Phone numbers" }).click()
    await page.getByText("No numbers yet").waitFor()
    await page.getByLabel("Number", { exact: true }).fill("+14155550100")
    await page.getByLabel("Label (optional)").fill("Front desk line")
    await page.getByRole("button", { name: "Add number" }).click()
    const routing = page.getByLabel("Agent answering +14155550100")
    await routing.waitFor()
    await routing.selectOption({ label: "Front desk" })
    await page.getByText("+14155550100 is answered by Front desk.").waitFor()

    const configs = await api.get("/api/v1/organizations/telephony-configs", { token: adminToken })
    const config = configs.body.configurations.find((c: { name: string }) => c.name === "Twilio test")
    const numbers = await api.get(`/api/v1/organizations/telephony-configs/${config.id}/phone-numbers`, {
      token: adminToken
    })
    expect(numbers.body.phone_numbers).toMatchObject([{ address: "+14155550100", inbound_workflow_id: agentId }])
    await checkPage("telephony")

    // A number the carrier refused as a caller ID is shown so, and put back into pools from here.
    await server.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`UPDATE phone_numbers SET caller_id_refused_at = now(), caller_id_refused_reason = 'Twilio refused the call (HTTP 400, code 21210)'
          WHERE id = ${numbers.body.phone_numbers[0].id}`
      )
    )
    await row.getByRole("button", { name: "Phone numbers" }).click()
    await row.getByRole("button", { name: "Phone numbers" }).click()
    const refusedBadge = page.getByText("refused as caller ID")
    await refusedBadge.waitFor()
    expect(await refusedBadge.getAttribute("title")).toContain("21210")
    await page.getByRole("button", { name: "Use again +14155550100" }).click()
    await page.getByText("+14155550100 is back in caller-ID pools.").waitFor()
    await refusedBadge.waitFor({ state: "detached" })
    const restored = await api.get(`/api/v1/organizations/telephony-configs/${config.id}/phone-numbers`, {
      token: adminToken
    })
    expect(restored.body.phone_numbers[0]).toMatchObject({ caller_id_refused_at: null, label: "Front desk line" })

    // A second configuration, deleted again.
    await page.getByRole("button", { name: "New configuration" }).click()
    await page.getByLabel("Name").fill("Spare")
    await page.getByLabel("Account SID").fill("AC0123456789abcdef0123456789abcdee")
    await page.getByLabel("Auth token").fill("twilio-secret-token-0002")
    await page.getByLabel("API base URL (optional)").fill("http://127.0.0.1:9")
    await page.getByRole("button", { name: "Create" }).click()
    await page.getByRole("button", { name: "Delete Spare" }).click()
    await page.getByRole("row", { name: /Spare/ }).waitFor({ state: "detached" })
    expect((await api.get("/api/v1/organizations/telephony-configs", { token: adminToken })).body.configurations)
      .toHaveLength(1)
  })

  it("uploads, plays, renames and deletes a recording", async () => {
    await settingsSection("Recordings").click()
    await page.getByText("No clips yet").waitFor()
    await page.getByLabel("Audio file").setInputFiles({
      name: "welcome.wav",
      mimeType: "audio/wav",
      buffer: Buffer.from(wavFile(sine(440, 16000, 1.2), 16000))
    })
    await page.getByLabel("Label (optional)").fill("Welcome")
    await page.getByLabel("Recording ID (optional)").fill("welcome")
    await page.getByRole("button", { name: "Upload" }).click()
    const row = page.getByRole("row", { name: /welcome/ })
    await row.getByText("1.2 s").waitFor()

    await row.getByRole("button", { name: "Play Welcome" }).click()
    const audio = row.locator("audio")
    await audio.waitFor()
    const seconds = await audio.evaluate((element: any) =>
      new Promise<number>((resolve) => {
        if (element.readyState >= 1) resolve(element.duration)
        else element.addEventListener("loadedmetadata", () => resolve(element.duration))
      })
    )
    expect(seconds).toBeCloseTo(1.2, 1)

    await row.getByRole("button", { name: "Rename Welcome" }).click()
    await row.getByLabel("New label for welcome").fill("Welcome (summer)")
    await row.getByRole("button", { name: "Save" }).click()
    await page.getByRole("row", { name: /Welcome \(summer\)/ }).waitFor()
    await checkPage("recordings")

    await page.getByRole("button", { name: "Delete Welcome (summer)" }).click()
    await page.getByText("No clips yet").waitFor()
    expect((await api.get("/api/v1/workflow-recordings", { token: adminToken })).body.total).toBe(0)
  })

  it("creates a scoped API key shown once that works until it is revoked", async () => {
    await settingsSection("API keys").click()
    await page.getByRole("heading", { name: "New API key" }).waitFor()
    await page.getByLabel("Name").fill("reporting")
    for (
      const scope of [
        "agents:read",
        "agents:write",
        "conversations:read",
        "campaigns:read",
        "campaigns:write",
        "calls:read",
        "calls:write",
        "webhooks:write",
        "tests:read",
        "tests:write",
        "knowledge:read",
        "knowledge:write"
      ]
    ) {
      await page.getByRole("checkbox", { name: new RegExp(`^${scope} `) }).uncheck()
    }
    await page.getByRole("checkbox", { name: /^telephony:write / }).uncheck()
    await page.getByRole("button", { name: "Create key" }).click()
    const shown = page.getByLabel("The new API key")
    await shown.waitFor()
    const key = await shown.inputValue()
    expect(key.length).toBeGreaterThan(20)
    await page.getByRole("button", { name: "Copy" }).click()
    await page.getByText(/Copied to the clipboard|copy it by hand/).waitFor()
    await checkPage("api-keys-created")

    const usage = "/api/v1/organizations/usage/daily-breakdown?start_date=2026-01-01&end_date=2026-01-31"
    expect((await api.get(usage, { apiKey: key })).status).toBe(200)
    expect((await api.get("/api/v1/workflow/fetch", { apiKey: key })).status).toBe(403)

    await page.getByRole("button", { name: "I have saved it" }).click()
    expect(await page.content()).not.toContain(key)
    const row = page.getByRole("row", { name: /reporting/ })
    expect(await row.getByRole("cell", { name: "usage:read" }).count()).toBe(1)
    await row.getByRole("button", { name: "Revoke reporting" }).click()
    await row.waitFor({ state: "detached" })
    expect((await api.get(usage, { apiKey: key })).status).toBe(401)

    await page.getByLabel("Show revoked keys").check()
    await page.getByRole("button", { name: "Reactivate reporting" }).click()
    await page.getByRole("button", { name: "Revoke reporting" }).waitFor()
    expect((await api.get(usage, { apiKey: key })).status).toBe(200)
    await checkPage("api-keys")
  })

  it("adds a member, changes their role, and shows a member what they may not change", async () => {
    await settingsSection("Members").click()
    await page.getByRole("heading", { name: "Add a member" }).waitFor()
    const email = uniqueEmail("ada")
    await page.getByLabel("Email").fill(email)
    await page.getByLabel("Name").fill("Ada")
    await page.getByLabel("First password").fill("a first password for Ada")
    await page.getByRole("button", { name: "Add member" }).click()
    await page.getByRole("row", { name: /Ada/ }).waitFor()
    await page.getByLabel("Role of Ada").selectOption("admin")
    await page.getByText("Ada is now admin.").waitFor()
    await page.getByLabel("Role of Ada").selectOption("member")
    await page.getByText("Ada is now member.").waitFor()
    // The last owner cannot step down: the API's 409 in words.
    await page.getByLabel("Role of Admin").selectOption("member")
    expect(await page.getByRole("alert").textContent()).toMatch(/owner/)
    expect(await page.getByLabel("Role of Admin").inputValue()).toBe("owner")
    await checkPage("members")

    const context = await browser.newContext({ viewport: WIDE })
    const asMember = await context.newPage()
    asMember.setDefaultTimeout(15_000)
    await signIn(asMember, email, "a first password for Ada")
    await asMember.goto(`${server.url}/settings/models`)
    await asMember.getByText("changing or testing them needs an admin or owner").waitFor()
    expect(await asMember.getByRole("button", { name: "Save" }).count()).toBe(0)
    expect(await asMember.getByRole("button", { name: "Test language model" }).isDisabled()).toBe(true)
    await asMember.goto(`${server.url}/settings/members`)
    await asMember.getByRole("row", { name: /Admin/ }).waitFor()
    expect(await asMember.getByRole("combobox").count()).toBe(0)
    expect(await asMember.getByRole("button", { name: /^Remove/ }).count()).toBe(0)
    expect(await asMember.getByRole("button", { name: "Leave Ada" }).count()).toBe(1)
    await screenshot(asMember, "settings-members-as-member")
    expect(await seriousViolations(asMember), "axe violations on the members page of a member").toEqual([])
    await context.close()
  })

  it("keeps the other pages usable at tablet width", async () => {
    llm.enqueue(reply.content("Hello, how can I help?"))
    const chat = await api.post(`/api/v1/workflow/${agentId}/text-chat/sessions`, {}, { token: adminToken })
    expect(chat.status).toBe(200)
    await page.goto(`${server.url}/runs`)
    await page.locator("main table tbody tr").first().waitFor()
    for (const [name, path] of [["agents", "/agents"], ["conversations", "/runs"], ["usage", "/usage"]] as const) {
      await page.goto(`${server.url}${path}`)
      await page.locator("main h1").first().waitFor()
      await checkPage(`other-${name}`)
    }
  })
})
