import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { hasChromium, launchChromium, screenshot, screenshotDir, seriousViolations } from "./support/browser.ts"
import { client } from "./support/client.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer, TEST_ADMIN } from "./support/server.ts"
import { generatedAgentContent } from "./support/workflowGraphs.ts"

if (!hasChromium) {
  console.warn("Skipping the console's browser tests: no Chromium at /usr/bin/chromium (apt-get install -y chromium).")
}

let server: RunningServer
let llm: ScriptedLlm
let browser: Browser
let page: Page

/** No serious or critical accessibility problem on the page as it is, and a screenshot of it. */
const checkPage = async (name: string) => {
  await screenshot(page, name)
  expect(await seriousViolations(page), `axe violations on ${name}`).toEqual([])
}

describe.skipIf(!hasChromium)("the console in Chromium", () => {
  beforeAll(async () => {
    llm = await startScriptedLlm()
    server = await startServer()
    const api = client(server.url)
    const login = await api.post("/api/v1/auth/login", TEST_ADMIN)
    const models = await api.put("/api/v1/organizations/model-configurations", {
      llm: { provider: "openai", model: "scripted-model", api_key: "sk-test-key-123456", base_url: llm.baseUrl }
    }, { token: login.body.token })
    expect(models.status).toBe(200)
    browser = await launchChromium()
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    page.setDefaultTimeout(15_000)
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await llm?.close()
  })

  it("signs in, explaining where the first admin comes from", async () => {
    await page.goto(`${server.url}/`)
    await expect(page.getByRole("heading", { name: "First time here?" }).isVisible()).resolves.toBe(true)
    await checkPage("01-sign-in")
    await page.getByLabel("Email").fill(TEST_ADMIN.email)
    await page.getByLabel("Password").fill("wrong-password")
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("alert").waitFor()
    expect(await page.getByRole("alert").textContent()).toMatch(/\w/)
    await page.getByLabel("Password").fill(TEST_ADMIN.password)
    await page.getByRole("button", { name: "Sign in" }).click()
    await page.getByRole("heading", { name: "Agents" }).waitFor()
    expect(await page.locator(".organization").textContent()).toMatch(/Organization/)
    await checkPage("02-agents-empty")
  })

  it("creates an agent from a template and opens it in the editor", async () => {
    await page.getByRole("link", { name: "New agent" }).click()
    await page.getByLabel("Use case").fill("Lead qualification")
    await page.getByLabel("Description").fill("Call leads who asked for a demo and qualify them.")
    await checkPage("03-new-agent")
    llm.enqueue(reply.json(generatedAgentContent()))
    await page.getByRole("button", { name: "Create agent" }).click()
    await page.locator(".react-flow__node").first().waitFor()
    expect(await page.locator(".react-flow__node").count()).toBe(5)
    expect(page.url()).toMatch(/\/agents\/\d+$/)
    await checkPage("04-editor")
  })

  it("adds a node, connects it, and publishes the new version", async () => {
    await page.getByRole("button", { name: "+ Agent step" }).click()
    await page.getByLabel("Name", { exact: true }).fill("Follow up")
    await page.getByLabel("Prompt", { exact: true }).fill("Ask whether they have further questions.")
    const added = page.locator(".react-flow__node", { hasText: "Follow up" })
    await added.waitFor()
    // Drag from the "Qualify" step's outgoing handle to the new node's incoming one.
    const from = page.locator(".react-flow__node", { hasText: "Qualify" }).locator(".react-flow__handle.source")
    const to = added.locator(".react-flow__handle.target")
    const a = (await from.boundingBox())!
    const b = (await to.boundingBox())!
    await page.mouse.move(a.x + a.width / 2, a.y + a.height / 2)
    await page.mouse.down()
    await page.mouse.move(b.x + b.width / 2, b.y + b.height / 2, { steps: 12 })
    await page.mouse.up()
    await page.getByRole("heading", { name: "Transition" }).waitFor()
    await page.getByLabel("Label", { exact: true }).fill("Questions")
    await page.getByLabel("Condition", { exact: true }).fill("They still have questions")
    expect(await page.locator(".react-flow__edge").count()).toBe(6)

    // The new step leads nowhere yet: publishing is refused and the problem shows on the node.
    await page.getByRole("button", { name: "Publish" }).click()
    await page.locator(".graph-node.has-problem").first().waitFor()
    await screenshot(page, "05-editor-problem")

    const end = page.locator(".react-flow__node", { hasText: "End call" }).locator(".react-flow__handle.target")
    const c = (await added.locator(".react-flow__handle.source").boundingBox())!
    const d = (await end.boundingBox())!
    await page.mouse.move(c.x + c.width / 2, c.y + c.height / 2)
    await page.mouse.down()
    await page.mouse.move(d.x + d.width / 2, d.y + d.height / 2, { steps: 12 })
    await page.mouse.up()
    await page.getByLabel("Condition", { exact: true }).fill("No more questions")
    await page.getByRole("button", { name: "Publish" }).click()
    await page.getByText(/Version \d+ published/).waitFor()
    await checkPage("06-editor-published")
  })

  it("chats with the agent, the reply streamed and the current node lit", async () => {
    await page.getByRole("button", { name: "Start a conversation" }).click()
    await page.getByLabel("Message").waitFor()
    llm.enqueue(reply.content("Great, do you have a minute to talk about the demo?", { chunkDelayMs: 20 }))
    await page.getByLabel("Message").fill("Hi, yes I do")
    await page.getByRole("button", { name: "Send" }).click()
    await page.getByText("do you have a minute to talk about the demo?").waitFor()
    expect(await page.locator(".graph-node.active").count()).toBe(1)
    await checkPage("07-try-it")
  })

  it("lists the conversation and shows usage", async () => {
    await page.getByRole("link", { name: "Conversations" }).click()
    await page.locator("table a", { hasText: "#" }).first().waitFor()
    await checkPage("08-conversations")
    await page.locator("table a", { hasText: "#" }).first().click()
    await page.getByRole("heading", { name: "Transcript" }).waitFor()
    await checkPage("09-conversation")
    await page.getByRole("link", { name: "Usage" }).click()
    await page.getByRole("img", { name: /per day/ }).waitFor()
    await checkPage("10-usage")
    console.info(`Console screenshots: ${screenshotDir}`)
  })

  it("signs out back to the sign-in page", async () => {
    await page.getByRole("button", { name: "Sign out" }).click()
    await page.getByRole("heading", { name: "Sign in to talkgraph" }).waitFor()
  })
})
