import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { client } from "./support/client.ts"
import { CalleeRefused, connectCallee } from "./support/fakeCallee.ts"
import { startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { startOtlpCollector } from "./support/otlpCollector.ts"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "./support/process.ts"
import { reply, startScriptedLlm } from "./support/scriptedLlm.ts"
import { voiceDefinition } from "./support/voiceFixtures.ts"

const admin = { email: "owner@example.test", password: "owner-password-media-1" }

const refusedWith = (url: string) =>
  connectCallee({ url, provider: "browser", script: [{ hangUp: true }] }).then(
    () => 0,
    (error) => (error instanceof CalleeRefused ? error.status : -1)
  )

describe("media stream tokens in logs and traces", () => {
  it("a media URL's token is in no log line and no exported span, for a call held and for refused links", async () => {
    const [collector, llm, deepgram, speech] = await Promise.all([
      startOtlpCollector(),
      startScriptedLlm(),
      startFakeDeepgram(),
      startFakeSpeechApis()
    ])
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-media-logs-"))
    const port = String(await freePort())
    const url = `http://127.0.0.1:${port}`
    const api = client(url)
    const proc = spawnTalkgraph(["serve"], {
      PORT: port,
      TALKGRAPH_DATA_DIR: dataDir,
      TALKGRAPH_ADMIN_EMAIL: admin.email,
      TALKGRAPH_ADMIN_PASSWORD: admin.password,
      LOG_LEVEL: "debug",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url
    })
    const tokens: Array<string> = []
    let runId = 0
    try {
      await waitUntilServing(proc, url)
      const token = (await api.post("/api/v1/auth/login", admin)).body.token as string
      const settings = await api.put("/api/v1/organizations/model-configurations", {
        llm: { provider: "openai", model: "scripted-model", api_key: "sk-test-key-123456", base_url: llm.baseUrl },
        stt: {
          provider: "deepgram",
          model: "nova-3",
          api_key: deepgram.apiKey,
          base_url: deepgram.url,
          language: "en"
        },
        tts: {
          provider: "elevenlabs",
          model: "eleven_flash_v2_5",
          api_key: speech.apiKey,
          base_url: speech.url,
          voice: "test-voice"
        }
      }, { token })
      expect(settings.status).toBe(200)
      const workflow = await api.post("/api/v1/workflow/create/definition", {
        name: "Logged call",
        workflow_definition: voiceDefinition()
      }, { token })
      const started = await api.post(`/api/v1/workflow/${workflow.body.id}/browser-calls`, { use_draft: true }, {
        token
      })
      expect(started.status).toBe(200)
      runId = started.body.workflow_run_id
      const mediaUrl = new URL(started.body.media_url)
      const genuine = mediaUrl.pathname.split("/").at(-1)!
      tokens.push(genuine)
      llm.enqueue(reply.content("Goodbye."))

      // Refused links, whose tokens are logged as the request path, then the genuine call.
      const forged = `${Math.floor(Date.now() / 1000) + 300}.forgedSignatureForTheLogTest0123456789abcdef`
      tokens.push(forged)
      const base = `ws://127.0.0.1:${port}/api/v1/telephony`
      expect(await refusedWith(`${base}/twilio/media/${runId}/${forged}`)).toBe(403)
      expect(await refusedWith(`${base}/browser/media/999999999/${forged}`)).toBe(403)
      expect(await refusedWith(`${base}/browser/media/${runId}?token=${forged}`)).toBe(404)
      expect((await fetch(`${url}/api/v1/telephony/plivo/media/${runId}/${forged}`)).status).toBe(403)
      const call = await connectCallee({
        url: mediaUrl.toString(),
        provider: "browser",
        script: [{ waitForAgent: { quietMs: 500, timeoutMs: 10_000 } }, { hangUp: true }]
      })
      expect((await call.done).agentBursts.length).toBeGreaterThan(0)
      const deadline = Date.now() + 15_000
      while (!proc.output().includes("Voice call ended") && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      // The genuine link used once is refused afterwards, and that refusal is logged too.
      expect(await refusedWith(mediaUrl.toString())).toBe(403)
    } finally {
      expect(await stop(proc)).toBe(0)
      await Promise.all([collector.close(), llm.close(), deepgram.close(), speech.close()])
      await fs.rm(dataDir, { recursive: true, force: true })
    }
    const lines = proc.output().split("\n").filter((line) => line.startsWith("{")).map((line) => JSON.parse(line))
    expect(lines).toContainEqual(expect.objectContaining({
      message: "Sent HTTP response",
      annotations: expect.objectContaining({
        "http.path": `/api/v1/telephony/twilio/media/${runId}/[token]`,
        "http.status": 403
      })
    }))
    expect(lines).toContainEqual(
      expect.objectContaining({ message: ["Voice call ended", expect.objectContaining({ run_id: runId })] })
    )
    const spans = collector.exports.filter((sent) => sent.path === "/v1/traces")
    expect(spans.some((sent) => sent.text.includes(`/api/v1/telephony/browser/media/${runId}/[token]`))).toBe(true)
    for (const secret of tokens) {
      expect(proc.output()).not.toContain(secret)
      for (const sent of collector.exports) expect(sent.text).not.toContain(secret)
    }
  }, 120_000)
})
