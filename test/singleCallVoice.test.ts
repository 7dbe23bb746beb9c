import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony, eventually } from "./support/dialerFixtures.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { useVoiceModels, voiceDefinition } from "./support/voiceFixtures.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.ts"

let server: RunningServer
let api: Client
let carrier: FakeTwilio
let deepgram: FakeDeepgram
let speech: FakeSpeechApis
let llm: ScriptedLlm
let receiver: WebhookReceiver

beforeAll(async () => {
  ;[carrier, deepgram, speech, llm, receiver] = await Promise.all([
    startFakeTwilio(),
    startFakeDeepgram(),
    startFakeSpeechApis(),
    startScriptedLlm({ sameAnswerWithinMs: 2000 }),
    startWebhookReceiver()
  ])
  server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: "200", TALKGRAPH_WEBHOOK_POLL_MS: "100" }, {
    ownDatabase: true
  })
  api = client(server.url)
}, 60_000)
afterAll(async () => {
  await server?.close()
  await Promise.all([carrier?.close(), deepgram?.close(), speech?.close(), llm?.close(), receiver?.close()])
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

describe("a single call spoken end to end", () => {
  it(
    "talks with the callee, and its run.completed webhook carries the transcript, the extracted variables, usage and working artifact links",
    async () => {
      const account = await newAccount(api)
      await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
      await carrierTelephony(api, { token: account.token }, carrier)
      const workflowId = await createWorkflow(api, server, account, voiceDefinition())
      const key = await newApiKey(api, account, ["calls:write", "calls:read"])
      const endpoint = await api.post("/api/v1/webhooks", { url: receiver.url, event_types: ["run.completed"] }, {
        token: account.token
      })
      expect(endpoint.status).toBe(200)
      receiver.useSecret(endpoint.body.secret)

      const to = "+14155550177"
      carrier.calleeScript(to, [
        { waitForAgent: { quietMs: 700 } },
        { say: "Yes, tell me more." },
        { waitForAgent: { quietMs: 700 } },
        { say: "About five hundred dollars." },
        { waitForAgent: { quietMs: 4000, timeoutMs: 30_000 } },
        { hangUp: true }
      ])
      llm.enqueue(
        reply.toolCalls([{ name: "interested", arguments: {} }]),
        reply.content("Great! What budget do you have in mind?"),
        reply.toolCalls([{ name: "budget_known", arguments: {} }]),
        reply.json({ budget: 500 }),
        reply.content("Thank you, Dana. Goodbye!")
      )
      const created = await api.post("/api/v2/calls", {
        agent_id: workflowId,
        phone_number: to,
        variables: { first_name: "Dana" }
      }, { apiKey: key })
      expect(created.status).toBe(201)
      const runId = created.body.data.run_id as number
      deepgram.script(`talkgraph-run-${runId}`, ["Yes, tell me more.", "About five hundred dollars."])

      const message = await eventually(
        async () =>
          receiver.accepted().find((candidate) => (candidate.body.data as { run_id: number }).run_id === runId),
        60_000,
        "run.completed delivered"
      )
      const data = message.body.data as Record<string, any>
      expect(data.transcript.map((turn: { role: string; text: string }) => [turn.role, turn.text])).toEqual([
        ["assistant", "Hi Dana, this is Acme calling about solar panels."],
        ["user", "Yes, tell me more."],
        ["assistant", "Great! What budget do you have in mind?"],
        ["user", "About five hundred dollars."],
        ["assistant", "Thank you, Dana. Goodbye!"]
      ])
      expect(data).toMatchObject({
        call_id: created.body.data.id,
        status: "completed",
        end_reason: "end_node_reached",
        extracted_variables: { budget: 500 },
        initial_context: { first_name: "Dana", triggered_by: "api" }
      })
      expect(data.duration_seconds).toBeGreaterThan(0)
      expect(data.usage.tts_characters).toBeGreaterThan(0)
      expect(data.usage.stt_seconds).toBeGreaterThan(2)
      for (const url of [data.artifacts.recording_url, data.artifacts.transcript_url]) {
        expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api\/v1\/artifacts\//)
        const fetched = await fetch(url, { redirect: "manual" })
        expect(fetched.status).toBe(200)
        expect((await fetched.arrayBuffer()).byteLength).toBeGreaterThan(0)
      }
      const call = (await api.get(`/api/v2/calls/${created.body.data.id}`, { apiKey: key })).body.data
      expect(call).toMatchObject({ status: "completed", outcome: "completed" })
      const [attempt] = await query<{ ended: boolean }>((sql) =>
        sql`SELECT ended_at IS NOT NULL AS ended FROM campaign_attempts WHERE run_id = ${runId}`
      )
      expect(attempt!.ended).toBe(true)
      expect(receiver.badSignatures).toEqual([])
    },
    90_000
  )
})
