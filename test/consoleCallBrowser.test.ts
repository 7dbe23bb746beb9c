import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import type { Browser, Page } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { TestAccount } from "./support/accounts.ts"
import { wavFile } from "./support/audioClips.ts"
import { hasChromium, launchChromium, screenshot, seriousViolations } from "./support/browser.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { client } from "./support/client.ts"
import { eventually } from "./support/dialerFixtures.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer, TEST_ADMIN } from "./support/server.ts"
import { speak } from "./support/speechAudio.ts"
import { useVoiceModels, voiceDefinition } from "./support/voiceFixtures.ts"

if (!hasChromium) {
  console.warn("Skipping the console's call test: no Chromium at /usr/bin/chromium (apt-get install -y chromium).")
}

const CALLER_LINE = "Yes, I am interested."
const ANSWER = "Great. What budget do you have in mind?"
/** The answer to the first line, long enough for the caller to speak over it. */
const LONG_ANSWER =
  "Great. Our panels come in three sizes. The small one suits a flat. The medium one suits a house. " +
  "The large one suits a farm or a business with a big roof. What budget do you have in mind?"
const BARGE_IN = "Stop, wait a second."
const AFTER_BARGE_IN = "Sure, go ahead."
const KEYPAD_ANSWER = "You pressed two. Shall I tell you more?"
/** Silence before the caller speaks: the greeting plays first. */
const LEAD_SECONDS = 6
/** From the end of the first line to the second: the agent's long answer is well under way. */
const GAP_SECONDS = 3

let server: RunningServer
let llm: ScriptedLlm
let deepgram: FakeDeepgram
let speech: FakeSpeechApis
let browser: Browser
let page: Page
let workflowId: number
let workDir: string
let adminToken: string

/**
 * The caller, as the WAV Chromium's fake microphone plays once (`%noloop`) from the moment the page
 * opens it: silence through the greeting, the first line, then the second over the agent's answer.
 */
const callerWav = async () => {
  const rate = 16000
  const [first, second] = await Promise.all([speak(CALLER_LINE, rate), speak(BARGE_IN, rate)])
  const secondAt = rate * (LEAD_SECONDS + GAP_SECONDS) + first.length
  const samples = new Float32Array(secondAt + second.length + rate * 8)
  samples.set(Float32Array.from(first, (sample) => sample / 32768), rate * LEAD_SECONDS)
  samples.set(Float32Array.from(second, (sample) => sample / 32768), secondAt)
  const file = path.join(workDir, "caller.wav")
  fs.writeFileSync(file, wavFile(samples, rate))
  return file
}

describe.skipIf(!hasChromium)("a voice call from the console's editor, in Chromium", () => {
  beforeAll(async () => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), "talkgraph-call-"))
    ;[llm, deepgram, speech] = await Promise.all([startScriptedLlm(), startFakeDeepgram(), startFakeSpeechApis()])
    server = await startServer()
    const api = client(server.url)
    const login = await api.post("/api/v1/auth/login", TEST_ADMIN)
    expect(login.status).toBe(200)
    adminToken = login.body.token
    const admin = { token: adminToken } as TestAccount
    await useVoiceModels(api, admin, { llmUrl: llm.baseUrl, deepgram, tts: speech })
    // Laid out top to bottom, so the lit node is seen in the screenshots.
    const definition = voiceDefinition()
    workflowId = await createWorkflow(api, server, admin, {
      ...definition,
      nodes: definition.nodes.map((node, index) => ({ ...node, position: { x: 0, y: index * 160 } }))
    })
    browser = await launchChromium([
      "--use-fake-ui-for-media-stream",
      "--use-fake-device-for-media-stream",
      `--use-file-for-fake-audio-capture=${await callerWav()}%noloop`,
      "--autoplay-policy=no-user-gesture-required"
    ])
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } })
    page.setDefaultTimeout(20_000)
  })
  afterAll(async () => {
    await browser?.close()
    await server?.close()
    await Promise.all([llm?.close(), deepgram?.close(), speech?.close()])
    if (workDir) fs.rmSync(workDir, { recursive: true, force: true })
  })

  it(
    "calls the agent: greeting, the caller's words, the answer with its latency, the node lit, then hang-up",
    async () => {
      await page.goto(`${server.url}/`)
      await page.getByLabel("Email").fill(TEST_ADMIN.email)
      await page.getByLabel("Password").fill(TEST_ADMIN.password)
      await page.getByRole("button", { name: "Sign in" }).click()
      await page.getByRole("heading", { name: "Agents" }).waitFor()
      await page.goto(`${server.url}/agents/${workflowId}`)
      await page.locator(".react-flow__node").first().waitFor()

      await page.getByRole("button", { name: "Call", exact: true }).click()
      await expect(page.getByText("Use headphones").isVisible()).resolves.toBe(true)
      llm.enqueue(
        reply.toolCalls([{ name: "interested", arguments: {} }]),
        reply.content(LONG_ANSWER),
        reply.content(AFTER_BARGE_IN)
      )
      const started = page.waitForResponse((response) =>
        response.url().endsWith(`/workflow/${workflowId}/browser-calls`)
      )
      await page.getByRole("button", { name: "Start the call" }).click()
      const call = await started
      expect(call.status()).toBe(200)
      const runId: number = (await call.json()).workflow_run_id
      deepgram.script(`talkgraph-run-${runId}`, [CALLER_LINE, BARGE_IN])

      const transcript = page.getByRole("list", { name: "Live transcript" })
      // The start node is lit from the first moment; the greeting is in once it has played.
      await page.locator(".graph-node.active", { hasText: "Start" }).waitFor()
      await transcript.locator(".turn.assistant", { hasText: "this is Acme calling about solar panels" }).waitFor()
      await expect(page.getByRole("status").textContent()).resolves.toMatch(/Listening|Agent speaking/)

      // The caller's words (from the fake microphone, through the server's VAD and STT), and the
      // answer they spoke over: marked, and cut to what was heard.
      await transcript.locator(".turn.user", { hasText: CALLER_LINE }).waitFor({ timeout: 30_000 })
      const cut = transcript.locator(".turn.assistant.interrupted")
      await cut.waitFor()
      await expect(cut.locator(".turn-meta").textContent()).resolves.toContain("interrupted")
      const heard = (await cut.locator(".turn-text").textContent())!.replace(/…$/, "")
      expect(heard.length).toBeGreaterThan(0)
      expect(LONG_ANSWER.startsWith(heard)).toBe(true)
      expect(heard.length).toBeLessThan(LONG_ANSWER.length)
      const answer = transcript.locator(".turn.assistant", { hasText: AFTER_BARGE_IN })
      await answer.waitFor()
      // The edge taken shows between the caller's words and the agent's answer to them.
      await expect(transcript.locator("li").allTextContents()).resolves.toEqual([
        expect.stringContaining("this is Acme calling about solar panels"),
        expect.stringContaining(CALLER_LINE),
        "interested moves from Start to Qualify",
        expect.stringContaining(heard),
        expect.stringContaining(BARGE_IN),
        expect.stringContaining(AFTER_BARGE_IN)
      ])
      await expect(page.locator(".call-figures").textContent()).resolves.toContain("1 barge-in")
      const latency = Number((await answer.locator(".turn-meta").textContent())!.match(/answered in (\d+) ms/)![1])
      expect(latency).toBeGreaterThan(0)
      expect(latency).toBeLessThan(5000)
      await expect(page.locator(".call-figures").textContent()).resolves.toContain(`Last answer after ${latency} ms`)
      await page.locator(".graph-node.active", { hasText: "Qualify" }).waitFor()

      await screenshot(page, "call-01-editor-call")
      expect(await seriousViolations(page), "axe violations on the editor with a call").toEqual([])

      // What Qualify extracted when the call ended: the caller named no budget.
      llm.enqueue(reply.json({}))
      await page.getByRole("button", { name: "Hang up" }).click()
      await page.getByRole("status").filter({ hasText: "You hung up." }).waitFor()
      expect(await page.locator(".graph-node.active").count()).toBe(0)
      await screenshot(page, "call-02-ended")

      // The run is stored as it ends (its transcript file, what the last step extracted), just after the hang-up.
      await eventually(
        async () => {
          const filters = JSON.stringify([{ attribute: "runId", type: "number", value: { value: runId } }])
          const found = await client(server.url).get(
            `/api/v1/organizations/usage/runs?filters=${encodeURIComponent(filters)}`,
            {
              token: adminToken
            }
          )
          return found.body.runs?.[0]?.transcript_url ? true : undefined
        },
        20_000,
        `run ${runId} stored`
      )
      await page.getByRole("link", { name: "Conversations" }).first().click()
      await page.getByRole("link", { name: `#${runId}` }).waitFor()
      await page.getByRole("link", { name: `#${runId}` }).click()
      await page.getByRole("heading", { name: "Transcript" }).waitFor()
      await page.getByText(AFTER_BARGE_IN).waitFor()
      await page.getByText(CALLER_LINE).waitFor()
      await screenshot(page, "call-03-conversation")
      expect(llm.pending()).toBe(0)
    },
    120_000
  )

  it("sends the caller's keys from the call panel's keypad, and the agent answers them", async () => {
    await page.goto(`${server.url}/`)
    // Signed in already when the first test ran.
    if (await page.getByLabel("Email").count() > 0) {
      await page.getByLabel("Email").fill(TEST_ADMIN.email)
      await page.getByLabel("Password").fill(TEST_ADMIN.password)
      await page.getByRole("button", { name: "Sign in" }).click()
    }
    await page.getByRole("heading", { name: "Agents" }).waitFor()
    await page.goto(`${server.url}/agents/${workflowId}`)
    await page.locator(".react-flow__node").first().waitFor()
    await page.getByRole("button", { name: "Call", exact: true }).click()
    llm.enqueue(reply.content(KEYPAD_ANSWER))
    const started = page.waitForResponse((response) => response.url().endsWith(`/workflow/${workflowId}/browser-calls`))
    await page.getByRole("button", { name: "Start the call" }).click()
    expect((await started).status()).toBe(200)
    const transcript = page.getByRole("list", { name: "Live transcript" })
    await transcript.locator(".turn.assistant", { hasText: "this is Acme calling about solar panels" }).waitFor()
    await page.getByRole("group", { name: "Keypad" }).getByRole("button", { name: "Key 2" }).click()
    await transcript.locator(".turn.user", { hasText: "The caller pressed 2 on the keypad." }).waitFor()
    await transcript.locator(".turn.assistant", { hasText: KEYPAD_ANSWER }).waitFor()
    expect(llm.requests.at(-1)!.body.messages.at(-1)).toEqual({
      role: "user",
      content: "The caller pressed 2 on the keypad."
    })
    expect(await seriousViolations(page), "axe violations on the call panel's keypad").toEqual([])
    await page.getByRole("button", { name: "Hang up" }).click()
    await page.getByRole("status").filter({ hasText: "You hung up." }).waitFor()
  }, 60_000)

  it("shows the chat's tool calls and extracted variables as the conversation goes, also at tablet width", async () => {
    await page.setViewportSize({ width: 768, height: 1024 })
    await page.goto(`${server.url}/agents/${workflowId}`)
    await page.getByRole("button", { name: "Start a conversation" }).click()
    const log = page.locator(".chat-log")
    await log.locator(".turn.assistant", { hasText: "this is Acme calling about solar panels" }).waitFor()
    await expect(page.getByText("None yet").isVisible()).resolves.toBe(true)

    llm.enqueue(reply.toolCalls([{ name: "interested", arguments: {} }]), reply.content(ANSWER))
    await page.getByLabel("Message").fill(CALLER_LINE)
    await page.getByRole("button", { name: "Send" }).click()
    // The reply streams in first; the tools it called come with the finished exchange.
    await log.locator(".tool-call").waitFor()
    await log.locator(".turn.assistant", { hasText: ANSWER }).waitFor()
    await expect(log.locator(".tool-call").allTextContents()).resolves.toEqual([
      "interested moves from Start to Qualify"
    ])
    await page.locator(".graph-node.active", { hasText: "Qualify" }).waitFor()

    // Leaving Qualify extracts its budget; the end step says goodbye and the conversation ends.
    llm.enqueue(
      reply.toolCalls([{ name: "budget_known", arguments: {} }]),
      reply.json({ budget: 5000 }),
      reply.content("Thank you, goodbye!")
    )
    await page.getByLabel("Message").fill("About five thousand dollars.")
    await page.getByRole("button", { name: "Send" }).click()
    await page.getByRole("status").filter({ hasText: "The conversation ended" }).waitFor()
    await expect(log.locator(".tool-call").allTextContents()).resolves.toEqual([
      "interested moves from Start to Qualify",
      "budget_known moves from Qualify to End"
    ])
    // Once ended, the settled variables: the budget, with the disposition the end reason gave.
    const budget = page.locator(".variables div").filter({ has: page.getByText("budget", { exact: true }) })
    await expect(budget.locator("dd").textContent()).resolves.toBe("5000")
    await screenshot(page, "call-04-chat-details-tablet")
    expect(await seriousViolations(page), "axe violations on the editor's chat at tablet width").toEqual([])
  }, 60_000)
})
