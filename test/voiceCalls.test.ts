import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { buffer } from "node:stream/consumers"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { SecretBox } from "../services/SecretBox.ts"
import { Storage } from "../services/Storage.ts"
import { readWavLayout } from "../src/audio/wav.ts"
import { mediaStreamUrl, mediaToken } from "../src/telephony/mediaToken.ts"
import { twilioSignature } from "../src/telephony/twilioSignature.ts"
import { DEFAULT_FALLBACK_LINE } from "../src/voice/turnTaking/agentSettings.ts"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import type { CalleeScript } from "./support/calleeScript.ts"
import {
  type CarrierProviderName,
  carrierProviders,
  type CarrierStandIn,
  startCarrierStandIn
} from "./support/carrierStandIns.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony, eventually } from "./support/dialerFixtures.ts"
import { CalleeRefused, connectCallee } from "./support/fakeCallee.ts"
import {
  DEFAULT_INTERIM_EVERY_MS,
  type FakeDeepgram,
  type ScriptLine,
  startFakeDeepgram
} from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { uploadCsv } from "./support/uploads.ts"
import { useVoiceModels, voiceDefinition } from "./support/voiceFixtures.ts"

let server: RunningServer
let api: Client
let carrier: FakeTwilio
const standIns = new Map<CarrierProviderName, CarrierStandIn>()
let deepgram: FakeDeepgram
let speech: FakeSpeechApis
let llm: ScriptedLlm

beforeAll(async () => {
  ;[carrier, deepgram, speech, llm] = await Promise.all([
    startFakeTwilio(),
    startFakeDeepgram(),
    startFakeSpeechApis(),
    startScriptedLlm({ sameAnswerWithinMs: 2000 })
  ])
  standIns.set("twilio", carrier)
  for (const provider of carrierProviders.filter((name) => name !== "twilio")) {
    standIns.set(provider, await startCarrierStandIn(provider))
  }
  // Its own database: this server dials the campaigns it sees.
  server = await startServer({
    TALKGRAPH_SCHEDULER_POLL_MS: "200",
    ...(process.env.TEST_LOG_LEVEL ? { LOG_LEVEL: process.env.TEST_LOG_LEVEL } : {})
  }, { ownDatabase: true })
  api = client(server.url)
}, 60_000)
// Each test queues the replies it needs; one that failed must not leave its replies to the next.
beforeEach(() => llm.reset())
afterAll(async () => {
  await server?.close()
  await Promise.all([
    ...[...standIns.values()].map((standIn) => standIn.close()),
    deepgram?.close(),
    speech?.close(),
    llm?.close()
  ])
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

const voiceAccount = async () => {
  const account = await newAccount(api)
  await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
  return account
}

const campaignCall = async (
  account: TestAccount,
  to: string,
  definition = voiceDefinition(),
  through: CarrierStandIn = carrier
) => {
  await carrierTelephony(api, { token: account.token }, through)
  const workflowId = await createWorkflow(api, server, account, definition)
  const sourceId = await uploadCsv(api, { token: account.token }, `phone_number,first_name\n${to},Dana\n`)
  const created = await api.post("/api/v1/campaign/create", {
    name: "Voice",
    workflow_id: workflowId,
    source_type: "csv",
    source_id: sourceId
  }, { token: account.token })
  expect(created.status).toBe(200)
  expect((await api.post(`/api/v1/campaign/${created.body.id}/start`, undefined, { token: account.token })).status)
    .toBe(200)
  const [run] = await eventually(
    async () => {
      const rows = await query<{ id: number }>((sql) => sql`SELECT id FROM runs WHERE campaign_id = ${created.body.id}`)
      return rows.length > 0 ? rows : undefined
    },
    10_000,
    "call placed"
  )
  return { campaignId: created.body.id as number, runId: run!.id, tag: `talkgraph-run-${run!.id}` }
}

const stored = async (key: string) =>
  new Uint8Array(
    await server.run(Effect.scoped(Effect.flatMap(Storage, (storage) =>
      Effect.flatMap(storage.read(key), (body) =>
        Effect.promise(() =>
          buffer(body)
        )))))
  )

interface StoredRun {
  state: string
  end_reason: string
  transcript: Array<{ role: string; text: string; latency_ms?: number; start_ms?: number; interrupted?: boolean }>
  gathered_context: Record<string, unknown>
  stt_seconds: number
  tts_characters: number
  latency_p50_ms: number | null
  latency_p90_ms: number | null
  recording_key: string | null
  transcript_key: string | null
  ended_at: Date | null
  prompt_tokens: number
  busy_token: string | null
}

const endedRun = (runId: number, timeoutMs = 60_000) =>
  eventually(
    async () => {
      const [run] = await query<StoredRun>((sql) => sql`SELECT * FROM runs WHERE id = ${runId}`)
      return run?.ended_at && run.busy_token === null ? run : undefined
    },
    timeoutMs,
    `run ${runId} ended`
  )

describe.each(carrierProviders.map((provider, index) => ({ provider, index })))(
  "a campaign call spoken end to end over $provider",
  ({ provider, index }) => {
    it(
      "greets, listens, answers each turn, says goodbye and hangs up at the carrier, storing transcript, recording, usage and latency",
      async () => {
        const standIn = standIns.get(provider)!
        const account = await voiceAccount()
        const speechBefore = speech.requests.length
        const to = `+1415555010${index + 1}`
        // Vonage and Plivo write numbers without the "+".
        standIn.calleeScript(provider === "vonage" || provider === "plivo" ? to.slice(1) : to, [
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
        const call = await campaignCall(account, to, voiceDefinition(), standIn)
        deepgram.script(call.tag, ["Yes, tell me more.", "About five hundred dollars."])

        const run = await endedRun(call.runId)
        expect(run.state).toBe("completed")
        expect(run.end_reason).toBe("end_node_reached")
        expect(run.transcript.map((turn) => [turn.role, turn.text])).toEqual([
          ["assistant", "Hi Dana, this is Acme calling about solar panels."],
          ["user", "Yes, tell me more."],
          ["assistant", "Great! What budget do you have in mind?"],
          ["user", "About five hundred dollars."],
          ["assistant", "Thank you, Dana. Goodbye!"]
        ])
        expect(run.gathered_context).toMatchObject({ budget: 500 })
        // Every agent answer to a caller turn carries its latency; the run summarizes them.
        const answers = run.transcript.filter((turn, index) => turn.role === "assistant" && index > 0)
        expect(
          answers.every((turn) => typeof turn.latency_ms === "number" && turn.latency_ms > 0 && turn.latency_ms < 3000)
        ).toBe(true)
        expect(run.latency_p50_ms).toBeGreaterThan(0)
        expect(run.latency_p90_ms).toBeGreaterThanOrEqual(run.latency_p50_ms!)
        expect(run.stt_seconds).toBeGreaterThan(2)
        const spoken = [
          "Hi Dana, this is Acme calling about solar panels.",
          "Great!",
          "What budget do you have in mind?",
          "Thank you, Dana.",
          "Goodbye!"
        ]
        expect(run.tts_characters).toBe(
          speech.requests.slice(speechBefore).filter((request) =>
            request.api === "elevenlabs" && spoken.includes(request.text)
          ).reduce((sum, request) => sum + request.text.length, 0)
        )
        expect(run.prompt_tokens).toBeGreaterThan(0)

        // The recording holds both parties, as long as the call.
        const layout = readWavLayout(await stored(run.recording_key!))
        const rate = provider === "vonage" ? 16000 : 8000
        expect(layout).toMatchObject({ channels: 2, sampleRate: rate })
        expect(layout.frames / rate).toBeGreaterThan(4)

        // The agent ended the call at the carrier, over its REST API; the carrier's completed
        // callback then finished the campaign contact.
        const placed = standIn.calls().find((candidate) => candidate.to.endsWith(to.slice(1)))!
        const report = (await placed.calleeDone)!
        expect(report.agentBursts.length).toBeGreaterThanOrEqual(3)
        expect(placed.hungUpByApi).toBe(true)
        expect(report.endedBy).toBe("carrier")
        await eventually(
          async () => {
            const [contact] = await query<{ state: string }>((sql) =>
              sql`SELECT state FROM campaign_contacts WHERE campaign_id = ${call.campaignId}`
            )
            return contact?.state === "completed"
          },
          10_000,
          "contact completed"
        )
        const conversation = await api.get(`/api/v2/conversations/${call.runId}`, {
          apiKey: await newApiKey(api, account)
        })
        expect(conversation.body.data.latency).toEqual({ p50_ms: run.latency_p50_ms, p90_ms: run.latency_p90_ms })
        expect(standIn.callbackFailures()).toEqual([])
      },
      90_000
    )
  }
)

/** Starts a browser test call and connects a scripted caller to it. */
const browserCall = async (
  account: TestAccount,
  workflowId: number,
  script: CalleeScript,
  lines: ReadonlyArray<ScriptLine>
) => {
  const started = await api.post(`/api/v1/workflow/${workflowId}/browser-calls`, {}, { token: account.token })
  expect(started.status).toBe(200)
  const runId: number = started.body.workflow_run_id
  deepgram.script(`talkgraph-run-${runId}`, lines)
  const callee = await connectCallee({ url: started.body.media_url, provider: "browser", script })
  return { runId, mediaUrl: started.body.media_url as string, callee }
}

describe("barge-in, timeouts and hang-ups (browser test calls)", () => {
  it(
    "clears the agent's audio at the caller's first word over it, and keeps only what was heard",
    async () => {
      const account = await voiceAccount()
      const workflowId = await createWorkflow(api, server, account, voiceDefinition())
      const long = "Our panels come in three sizes. The small one suits a flat. The medium one suits a house. " +
        "The large one suits a farm or a business with a big roof. Each comes with a twenty year warranty."
      llm.enqueue(
        reply.toolCalls([{ name: "interested", arguments: {} }]),
        reply.content(long),
        reply.content("Sure, go ahead.")
      )
      const { runId, callee } = await browserCall(account, workflowId, [
        { waitForAgent: { quietMs: 700 } },
        { say: "Yes, I am interested." },
        { bargeIn: { afterAgentMs: 1500, say: "Stop, wait a second." } },
        { silence: 4000 },
        { hangUp: true }
      ], ["Yes, I am interested.", "Stop, wait a second."])

      const report = await callee.done
      expect(report.bargeIns).toHaveLength(1)
      const [bargeIn] = report.bargeIns
      expect(bargeIn!.clearAtMs).not.toBeNull()
      // Not on the first sound (a cough has no words), but at the caller's first word that is not a
      // backchannel: the stand-in's first interim result, plus detection and the clear's trip.
      expect(bargeIn!.clearAtMs! - bargeIn!.speechStartMs).toBeGreaterThanOrEqual(DEFAULT_INTERIM_EVERY_MS - 50)
      expect(bargeIn!.clearAtMs! - bargeIn!.speechStartMs).toBeLessThanOrEqual(DEFAULT_INTERIM_EVERY_MS + 250)
      const run = await endedRun(runId)
      const interrupted = run.transcript.find((turn) => turn.interrupted)
      expect(interrupted?.role).toBe("assistant")
      expect(long.startsWith(interrupted!.text)).toBe(true)
      expect(interrupted!.text.length).toBeLessThan(long.length)
      expect(run.transcript.slice(-2).map((turn) => [turn.role, turn.text])).toEqual([
        ["user", "Stop, wait a second."],
        ["assistant", "Sure, go ahead."]
      ])
      // The interrupted reply's speech was cancelled at the TTS provider, not played to the end.
      expect(
        speech.requests.some((request) => long.includes(request.text) && request.aborted) ||
          speech.requests.filter((request) => long.includes(request.text)).length < 5
      ).toBe(true)
    },
    90_000
  )

  it(
    "tells the browser page each turn as it is recorded, the edge taken, the node, the barge-in and the latency",
    async () => {
      const account = await voiceAccount()
      const workflowId = await createWorkflow(api, server, account, voiceDefinition())
      const long = "Our panels come in three sizes. The small one suits a flat. The medium one suits a house. " +
        "The large one suits a farm or a business with a big roof. Each comes with a twenty year warranty."
      llm.enqueue(
        reply.toolCalls([{ name: "interested", arguments: {} }]),
        reply.content(long),
        reply.content("Sure, go ahead.")
      )
      const { runId, callee } = await browserCall(account, workflowId, [
        { waitForAgent: { quietMs: 700 } },
        { say: "Yes, I am interested." },
        { bargeIn: { afterAgentMs: 1500, say: "Stop, wait a second." } },
        { silence: 4000 },
        { hangUp: true }
      ], ["Yes, I am interested.", "Stop, wait a second."])
      const report = await callee.done
      expect(report.protocolErrors).toEqual([])
      const events = report.progress.map(({ event }) => event)
      // The page can light the start node before the greeting plays.
      expect(events[0]).toEqual({ event: "node", node_id: "start" })
      expect(report.progress[0]!.atMs).toBeLessThanOrEqual(report.agentMedia[0]!.atMs)

      // Every turn the run stored, as it was stored, told once.
      const run = await endedRun(runId)
      const told = events.filter((event) => event.event === "transcript")
      expect(told.map(({ interrupted, latency_ms, role, text }) => ({ role, text, interrupted, latency_ms }))).toEqual(
        run.transcript.map((turn) => ({
          role: turn.role,
          text: turn.text,
          interrupted: turn.interrupted === true,
          latency_ms: turn.latency_ms
        }))
      )
      // The greeting is told once it has played, before the caller answers it.
      const greeting = report.progress.find(({ event }) => event.event === "transcript")!
      expect(greeting.event).toMatchObject({ role: "assistant", node_id: "start", interrupted: false })
      expect(greeting.atMs).toBeLessThan(report.utterances[0]!.startMs)

      expect(events.filter((event) => event.event === "tool_call")).toEqual([
        { event: "tool_call", name: "interested", from_node_id: "start", edge_id: "e1", to_node_id: "qualify" }
      ])
      // Told in the order it happened: the caller's words, the edge taken answering them, the agent's reply.
      const order = events.filter((event) => event.event !== "node").map((event) => event.role ?? event.event)
      expect(order.slice(0, 4)).toEqual(["assistant", "user", "tool_call", "assistant"])
      expect(events.at(-1)).toEqual({ event: "node", node_id: "qualify" })

      // The reply the caller spoke over is told at the barge-in, cut to what was heard.
      const cut = report.progress.find(({ event }) => event.event === "transcript" && event.interrupted)!
      expect(cut.event.role).toBe("assistant")
      expect(long.startsWith(cut.event.text)).toBe(true)
      expect(cut.event.latency_ms).toBeGreaterThan(0)
      expect(cut.atMs - report.bargeIns[0]!.clearAtMs!).toBeLessThan(1000)
      expect(told.at(-1)).toMatchObject({ role: "assistant", text: "Sure, go ahead.", interrupted: false })
      expect(told.at(-1)!.latency_ms).toBeGreaterThan(0)
    },
    90_000
  )

  it("answers a caller who pauses mid-sentence once, to everything they said, after they finish", async () => {
    const account = await voiceAccount()
    const workflowId = await createWorkflow(api, server, account, voiceDefinition())
    // The pause is long enough for an answer to be prepared, too short to end the turn.
    llm.enqueue(
      reply.content("Of course, here is more."),
      reply.content("Of course, here is more."),
      reply.content("Of course, here is more.")
    )
    const { runId, callee } = await browserCall(account, workflowId, [
      { waitForAgent: { quietMs: 700 } },
      { say: "I would like" },
      { silence: 100 },
      { say: "to hear more about the panels." },
      { waitForAgent: { quietMs: 700 } },
      { hangUp: true }
    ], [["I would like", "to hear more about the panels."]])
    const report = await callee.done
    // The greeting and one answer: nothing was said while the caller paused.
    expect(report.agentBursts).toHaveLength(2)
    const run = await endedRun(runId)
    expect(run.transcript.map((turn) => [turn.role, turn.text])).toEqual([
      ["assistant", "Hi there, this is Acme calling about solar panels."],
      ["user", "I would like to hear more about the panels."],
      ["assistant", "Of course, here is more."]
    ])
    // An answer to the first words was prepared during the pause, and dropped unheard.
    const asked = llm.requests.filter((request) => JSON.stringify(request.body).includes("I would like")).map((
      request
    ) => request.body.messages.at(-1))
    expect(asked[0]).toMatchObject({ role: "user", content: "I would like" })
    expect(asked.at(-1)).toMatchObject({ role: "user", content: "I would like to hear more about the panels." })
  }, 60_000)

  it(
    "survives a failing model: retries, asks the caller to repeat, then answers, and records each failure on the run",
    async () => {
      const account = await voiceAccount()
      const workflowId = await createWorkflow(api, server, account, voiceDefinition())
      // The first answer fails, and its retry (the same request, within the stand-in's 2 s) too.
      llm.enqueue(
        reply.error(500),
        reply.toolCalls([{ name: "interested", arguments: {} }]),
        reply.content("Great! What budget do you have in mind?")
      )
      const { runId, callee } = await browserCall(account, workflowId, [
        { waitForAgent: { quietMs: 700 } },
        { say: "Yes, tell me more." },
        { waitForAgent: { quietMs: 700 } },
        { say: "Yes, tell me more." },
        { waitForAgent: { quietMs: 700 } },
        { hangUp: true }
      ], ["Yes, tell me more.", "Yes, tell me more."])
      const report = await callee.done
      // Never dead air: the fallback line follows the caller's first words within seconds.
      const firstWords = report.utterances[0]!
      const fallback = report.agentBursts.find((burst) => burst.startMs > firstWords.endMs!)!
      expect(fallback.startMs - firstWords.endMs!).toBeLessThan(3000)
      const run = await endedRun(runId)
      expect(run).toMatchObject({ state: "completed", end_reason: "user_hangup" })
      expect(run.transcript.map((turn) => [turn.role, turn.text])).toEqual([
        ["assistant", "Hi there, this is Acme calling about solar panels."],
        ["assistant", DEFAULT_FALLBACK_LINE],
        ["user", "Yes, tell me more."],
        ["assistant", "Great! What budget do you have in mind?"]
      ])
      const failures = run.gathered_context.provider_failures as Array<{ provider: string; reason: string }>
      expect(failures.map((failure) => failure.provider)).toEqual(["llm", "llm"])
      expect(failures.every((failure) => failure.reason.length > 0)).toBe(true)
      expect(JSON.stringify(failures)).not.toContain("internal-detail-7f3a")
      // Each answer records how its turn was taken.
      const answer = run.transcript.at(-1) as any
      expect(answer.trace.turn_end_ms).toBeGreaterThanOrEqual(answer.trace.speech_end_ms)
      expect(answer.trace.first_audio_ms).toBeGreaterThanOrEqual(answer.trace.turn_end_ms)
    },
    60_000
  )

  it("ends a silent call with idle_timeout and hangs up", async () => {
    const account = await voiceAccount()
    const workflowId = await createWorkflow(api, server, account, voiceDefinition(), {
      configurations: { voice_idle_timeout_seconds: 3 }
    })
    const started = Date.now()
    const { runId, callee } = await browserCall(account, workflowId, [{ waitForAgent: { quietMs: 500 } }, {
      silence: 20_000
    }, { hangUp: true }], [])
    const report = await callee.done
    expect(report.endedBy).toBe("server")
    const run = await endedRun(runId)
    expect(run.end_reason).toBe("idle_timeout")
    expect(Date.now() - started).toBeLessThan(15_000)
  }, 60_000)

  it("keeps the recording and ends cleanly when the caller hangs up mid-sentence", async () => {
    const account = await voiceAccount()
    const workflowId = await createWorkflow(api, server, account, voiceDefinition())
    const { runId, callee } = await browserCall(account, workflowId, [{ silence: 1200 }, { hangUp: true }], [])
    await callee.done
    const run = await endedRun(runId)
    expect(run).toMatchObject({ state: "completed", end_reason: "user_hangup" })
    const layout = readWavLayout(await stored(run.recording_key!))
    expect(layout).toMatchObject({ channels: 2, sampleRate: 16000 })
    expect(layout.frames).toBeGreaterThan(16000)
    expect(JSON.parse(new TextDecoder().decode(await stored(run.transcript_key!)))).toMatchObject({ run_id: runId })
  }, 60_000)
})

describe("media stream admission", () => {
  it("refuses a bad, altered, expired or reused token, and another run's token", async () => {
    const account = await voiceAccount()
    const workflowId = await createWorkflow(api, server, account, voiceDefinition())
    const started = await api.post(`/api/v1/workflow/${workflowId}/browser-calls`, {}, { token: account.token })
    const other = await api.post(`/api/v1/workflow/${workflowId}/browser-calls`, {}, { token: account.token })
    const url = new URL(started.body.media_url)
    // The token is the last path segment: carriers drop query strings.
    expect(url.search).toBe("")
    const token = url.pathname.split("/").at(-1)!
    const [expiry, signature] = token.split(".")
    const withToken = (target: URL, value: string) => (target.pathname = target.pathname.replace(/[^/]+$/, value))
    const attempt = async (mutate: (target: URL) => void) => {
      const target = new URL(url)
      mutate(target)
      return connectCallee({ url: target.toString(), provider: "browser", script: [{ hangUp: true }] }).then(
        () => 0,
        (error) => (error instanceof CalleeRefused ? error.status : -1)
      )
    }
    expect(await attempt((target) => (target.pathname = target.pathname.replace(/\/[^/]+$/, "")))).toBe(404)
    expect(
      await attempt((target) => {
        target.pathname = target.pathname.replace(/\/[^/]+$/, "")
        target.searchParams.set("token", token)
      })
    ).toBe(404)
    expect(await attempt((target) => withToken(target, `${Number(expiry) + 60}.${signature}`))).toBe(403)
    expect(await attempt((target) => withToken(target, `${Math.floor(Date.now() / 1000) - 5}.${signature}`))).toBe(403)
    expect(await attempt((target) => withToken(target, new URL(other.body.media_url).pathname.split("/").at(-1)!)))
      .toBe(403)
    expect(await attempt((target) => (target.pathname = target.pathname.replace("/browser/", "/twilio/")))).toBe(403)

    // The genuine link works once; replayed after the call it is refused.
    const call = await connectCallee({
      url: url.toString(),
      provider: "browser",
      script: [{ silence: 300 }, { hangUp: true }]
    })
    await call.done
    await endedRun(started.body.workflow_run_id)
    expect(await attempt(() => undefined)).toBe(403)
  }, 60_000)

  it("does not let another organization start a call on a workflow it does not own", async () => {
    const owner = await voiceAccount()
    const stranger = await voiceAccount()
    const workflowId = await createWorkflow(api, server, owner, voiceDefinition())
    const refused = await api.post(`/api/v1/workflow/${workflowId}/browser-calls`, {}, { token: stranger.token })
    expect(refused.status).toBe(404)
  })
})

describe("inbound calls", () => {
  it(
    "answers a call to a number pointed at an agent, with a run of that agent, and refuses forged or unknown calls",
    async () => {
      const account = await voiceAccount()
      const workflowId = await createWorkflow(api, server, account, voiceDefinition())
      const telephony = await carrierTelephony(api, { token: account.token }, carrier)
      const number = await api.post(`/api/v1/organizations/telephony-configs/${telephony.id}/phone-numbers`, {
        address: "+14155550177",
        inbound_workflow_id: workflowId
      }, { token: account.token })
      expect(number.status).toBe(200)
      expect(number.body.inbound_workflow_id).toBe(workflowId)

      const webhook = `${server.url}/api/v1/telephony/twilio/inbound/${telephony.id}`
      const incoming = async (
        fields: Record<string, string>,
        signature = twilioSignature(carrier.authToken, webhook, fields)
      ) =>
        fetch(webhook, {
          method: "POST",
          headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": signature },
          body: new URLSearchParams(fields)
        })
      const fields = {
        CallSid: "CA00000000000000000000000000000077",
        From: "+14155550123",
        To: "+14155550177",
        AccountSid: carrier.accountSid
      }

      const forged = await incoming(fields, "forged")
      expect(forged.status).toBe(403)
      // An unknown configuration is refused as a forged call to a real one is: its existence is not revealed.
      const unknown = await fetch(`${server.url}/api/v1/telephony/twilio/inbound/999999999`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": "forged" },
        body: new URLSearchParams(fields)
      })
      expect({ status: unknown.status, body: await unknown.text() }).toEqual({ status: 403, body: await forged.text() })
      expect((await incoming({ ...fields, To: "+14155550199" })).status).toBe(404)
      const answered = await incoming(fields)
      expect(answered.status).toBe(200)
      const twiml = await answered.text()
      const streamUrl = /<Stream url="([^"]+)"/.exec(twiml)![1]!.replaceAll("&amp;", "&")
      const [run] = await query<
        { id: number; direction: string; caller_number: string; called_number: string; workflow_id: number }
      >((sql) =>
        sql`SELECT id, direction, caller_number, called_number, workflow_id FROM runs WHERE provider_call_id = ${fields.CallSid}`
      )
      expect(run).toMatchObject({
        direction: "inbound",
        caller_number: "+14155550123",
        called_number: "+14155550177",
        workflow_id: workflowId
      })
      deepgram.script(`talkgraph-run-${run!.id}`, ["Hi, I saw your ad."])
      llm.enqueue(reply.content("Thanks for calling! How can I help?"))
      const call = await connectCallee({
        url: streamUrl,
        provider: "twilio",
        twilioAuthToken: carrier.authToken,
        callId: fields.CallSid,
        script: [
          { waitForAgent: { quietMs: 700 } },
          { say: "Hi, I saw your ad." },
          { waitForAgent: { quietMs: 700 } },
          { hangUp: true }
        ]
      })
      await call.done
      const ended = await endedRun(run!.id)
      expect(ended).toMatchObject({ state: "completed", end_reason: "user_hangup" })
      expect(ended.transcript.map((turn) => turn.text)).toEqual([
        "Hi Dana, this is Acme calling about solar panels.".replace("Dana", "there"),
        "Hi, I saw your ad.",
        "Thanks for calling! How can I help?"
      ])
      // Without the carrier's signature on the upgrade, the media stream is refused even with the token.
      const unsigned = await connectCallee({ url: streamUrl, provider: "twilio", script: [{ hangUp: true }] }).then(
        () => 0,
        (error) => error.status
      )
      expect(unsigned).toBe(403)
    },
    60_000
  )
})

describe("every carrier's media stream protocol", () => {
  for (const provider of ["vonage", "telnyx", "plivo"] as const) {
    it(`holds a conversation over ${provider}'s media stream`, async () => {
      const account = await voiceAccount()
      const workflowId = await createWorkflow(api, server, account, voiceDefinition())
      // A run as the dialer creates it for this carrier, with a media link signed for it.
      const started = await api.post(`/api/v1/workflow/${workflowId}/browser-calls`, {}, { token: account.token })
      const runId: number = started.body.workflow_run_id
      await query((sql) => sql`UPDATE runs SET channel = 'telephony', mode = ${provider} WHERE id = ${runId}`)
      const token = await server.run(
        Effect.map(SecretBox, (secrets) => mediaToken(secrets.sign, runId, Math.floor(Date.now() / 1000) + 60))
      )
      deepgram.script(`talkgraph-run-${runId}`, ["Hello, who is this?"])
      llm.enqueue(reply.content("This is Acme. How are you today?"))
      const callee = await connectCallee({
        url: mediaStreamUrl(server.url, provider, runId, token),
        provider,
        script: [
          { waitForAgent: { quietMs: 700 } },
          { say: "Hello, who is this?" },
          { waitForAgent: { quietMs: 700 } },
          { hangUp: true }
        ]
      })
      const report = await callee.done
      expect(report.protocolErrors).toEqual([])
      expect(report.agentBursts.length).toBeGreaterThanOrEqual(2)
      const run = await endedRun(runId)
      expect(run.transcript.map((turn) => turn.text)).toEqual([
        "Hi there, this is Acme calling about solar panels.",
        "Hello, who is this?",
        "This is Acme. How are you today?"
      ])
      expect(readWavLayout(await stored(run.recording_key!)).sampleRate).toBe(provider === "vonage" ? 16000 : 8000)
    }, 60_000)
  }
})
