import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { describe, expect, it } from "vitest"
import { client } from "./support/client.ts"
import { startOtlpCollector } from "./support/otlpCollector.ts"
import { freePort, spawnTalkgraph, stop, waitUntilServing } from "./support/process.ts"
import { startScriptedLlm } from "./support/scriptedLlm.ts"
import { runnableDefinition } from "./support/workflowGraphs.ts"

const admin = { email: "owner@example.test", password: "owner-password-otlp-1" }

const spansOf = (body: any): Array<any> =>
  (body.resourceSpans ?? []).flatMap((resource: any) =>
    (resource.scopeSpans ?? []).flatMap((scope: any) => scope.spans ?? [])
  )
const logRecordsOf = (body: any): Array<any> =>
  (body.resourceLogs ?? []).flatMap((resource: any) =>
    (resource.scopeLogs ?? []).flatMap((scope: any) => scope.logRecords ?? [])
  )
const attribute = (resource: any, key: string) => resource?.attributes?.find((entry: any) => entry.key === key)?.value

describe("OpenTelemetry export (OTEL_EXPORTER_OTLP_ENDPOINT)", () => {
  it("sends the service's spans and logs to the collector, without credentials, tokens or keys", async () => {
    const collector = await startOtlpCollector()
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-otlp-"))
    const port = String(await freePort())
    const url = `http://127.0.0.1:${port}`
    const api = client(url)
    const proc = spawnTalkgraph(["serve"], {
      PORT: port,
      TALKGRAPH_DATA_DIR: dataDir,
      TALKGRAPH_ADMIN_EMAIL: admin.email,
      TALKGRAPH_ADMIN_PASSWORD: admin.password,
      LOG_LEVEL: "info",
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url
    })
    const secrets = [admin.password, "query-credential-31337"]
    try {
      await waitUntilServing(proc, url)
      const token = (await api.post("/api/v1/auth/login", admin)).body.token as string
      const key = (await api.post("/api/v1/user/api-keys", { name: "traced" }, { token })).body.api_key as string
      secrets.push(token, key)
      expect((await api.get("/api/v2/status", { apiKey: key })).status).toBe(200)
      expect((await api.get("/api/v1/health?token=query-credential-31337")).status).toBe(200)
    } finally {
      // Stopping flushes what is still batched.
      expect(await stop(proc)).toBe(0)
      await collector.close()
      await fs.rm(dataDir, { recursive: true, force: true })
    }
    const traces = collector.exports.filter((sent) => sent.path === "/v1/traces")
    const resource = traces[0]?.body.resourceSpans[0].resource
    expect(attribute(resource, "service.name")).toEqual({ stringValue: "talkgraph" })
    const spans = traces.flatMap((sent) => spansOf(sent.body))
    expect(spans.map((span) => span.name)).toEqual(expect.arrayContaining(["http.server POST", "http.server GET"]))
    // A request's work is traced under its request: authentication inside the server span.
    const authentication = spans.find((span) => span.name === "Identity.authenticate")
    expect(spans.find((span) => span.spanId === authentication?.parentSpanId)?.name).toMatch(/^http\.server /)
    const logs = collector.exports.filter((sent) => sent.path === "/v1/logs").flatMap((sent) => logRecordsOf(sent.body))
    expect(logs.map((record) => record.body?.stringValue)).toContain("Sent HTTP response")
    for (const sent of collector.exports) for (const secret of secrets) expect(sent.text).not.toContain(secret)
  }, 90_000)

  it("traces each chat step in a span naming its run, workflow and organization", async () => {
    const collector = await startOtlpCollector()
    const llm = await startScriptedLlm()
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-otlp-"))
    const port = String(await freePort())
    const url = `http://127.0.0.1:${port}`
    const api = client(url)
    const proc = spawnTalkgraph(["serve"], {
      PORT: port,
      TALKGRAPH_DATA_DIR: dataDir,
      TALKGRAPH_ADMIN_EMAIL: admin.email,
      TALKGRAPH_ADMIN_PASSWORD: admin.password,
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url
    })
    let ids: { run: number; workflow: number; organization: number } | undefined
    try {
      await waitUntilServing(proc, url)
      const login = (await api.post("/api/v1/auth/login", admin)).body
      const token = login.token as string
      const llmSettings = { provider: "openai", model: "scripted-model", api_key: "sk-test-key-123456" }
      expect(
        (await api.put(
          "/api/v1/organizations/model-configurations",
          { llm: { ...llmSettings, base_url: llm.baseUrl } },
          { token }
        )).status
      ).toBe(200)
      const workflow = await api.post(
        "/api/v1/workflow/create/definition",
        { name: "Traced agent", workflow_definition: runnableDefinition() },
        { token }
      )
      expect(workflow.status).toBe(200)
      const session = await api.post(`/api/v1/workflow/${workflow.body.id}/text-chat/sessions`, {}, { token })
      expect(session.status).toBe(200)
      ids = {
        run: session.body.workflow_run_id,
        workflow: workflow.body.id,
        organization: login.user.organization_id
      }
    } finally {
      expect(await stop(proc)).toBe(0)
      await collector.close()
      await llm.close()
      await fs.rm(dataDir, { recursive: true, force: true })
    }
    const spans = collector.exports.filter((sent) => sent.path === "/v1/traces").flatMap((sent) => spansOf(sent.body))
    const created = spans.find((span) => span.name === "ChatSessions.create")
    const number = (key: string) => Number(Object.values(attribute(created, key) ?? {})[0])
    expect(number("run_id")).toBe(ids!.run)
    expect(number("workflow_id")).toBe(ids!.workflow)
    expect(number("organization_id")).toBe(ids!.organization)
  }, 90_000)
})
