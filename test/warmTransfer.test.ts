import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import {
  carrierNumber,
  type CarrierProviderName,
  type CarrierStandIn,
  startCarrierStandIn
} from "./support/carrierStandIns.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { eventually } from "./support/dialerFixtures.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import type { DestinationBehaviour } from "./support/loopbackCarrier.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { keyThenListen, switchboardDefinition, transferAccount } from "./support/switchboard.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.ts"

// Warm transfers over the carriers' loopback stand-ins: the caller presses a key, the model calls
// the transfer tool, the carrier rings the destination on a call of its own while the caller stays
// with the agent, the destination hears the whisper and is joined with the caller, or it is not and
// the agent tells the caller so.

/** The carriers whose adapters carry out warm transfers. */
const WARM_CARRIERS: ReadonlyArray<CarrierProviderName> = ["twilio", "telnyx", "plivo", "vonage"]

let server: RunningServer
let api: Client
const standIns = new Map<CarrierProviderName, CarrierStandIn>()
let deepgram: FakeDeepgram
let speech: FakeSpeechApis
let llm: ScriptedLlm
let receiver: WebhookReceiver

const HOLD = "Please hold while I see whether they are free."
const UNAVAILABLE = "I am sorry, they are not available right now. Can I help you myself?"
const SUMMARY = "The caller wants to talk about an invoice."
/** What writing the summary costs: more than the rest of a short call, so the run's bill shows it. */
const SUMMARY_PROMPT_TOKENS = 5000

/**
 * The model of a switchboard: a key sends the caller to that department's transfer (4: one whose
 * summary the LLM fails to write); a summary request is answered with SUMMARY.
 */
const switchboard = (request: any): ReturnType<typeof reply.content> => {
  const messages: ReadonlyArray<{ role: string; content?: string }> = request.messages ?? []
  if (request.response_format?.json_schema?.name === "transfer_whisper") {
    return messages.some((message) => String(message.content).includes("pressed 4"))
      ? reply.content("I would rather not say.")
      : reply.json({ summary: SUMMARY }, { usage: { prompt_tokens: SUMMARY_PROMPT_TOKENS, completion_tokens: 9 } })
  }
  const last = messages.at(-1)
  if (last?.role === "tool") return reply.content(UNAVAILABLE)
  const pressed = /^The caller pressed (\d) on the keypad\.$/.exec(String(last?.content ?? ""))
  if (pressed) return reply.toolCalls([{ name: "transfer_the_caller", arguments: {} }], { content: HOLD })
  return reply.content("Which department?")
}

beforeAll(async () => {
  ;[deepgram, speech, llm] = await Promise.all([
    startFakeDeepgram(),
    startFakeSpeechApis(),
    startScriptedLlm({ answer: switchboard })
  ])
  receiver = await startWebhookReceiver()
  for (const provider of WARM_CARRIERS) standIns.set(provider, await startCarrierStandIn(provider))
  server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: "200" }, { ownDatabase: true })
  api = client(server.url)
}, 60_000)
afterAll(async () => {
  await server?.close()
  await Promise.all([...standIns.values()].map((standIn) => standIn.close()))
  await Promise.all([deepgram?.close(), speech?.close(), llm?.close(), receiver?.close()])
})

interface StoredRun {
  readonly state: string
  readonly end_reason: string
  readonly transcript: ReadonlyArray<{ role: string; text: string; tool_calls?: ReadonlyArray<any> }>
  readonly gathered_context: Record<string, unknown>
  readonly prompt_tokens: number
}

const endedRun = (runId: number) =>
  eventually(
    async () => {
      const [run] = await server.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
        sql<StoredRun & { ended_at: unknown; busy_token: unknown }>`SELECT * FROM runs WHERE id = ${runId}`))
      return run?.ended_at && run.busy_token === null ? run : undefined
    },
    45_000,
    `run ${runId} ended`
  )

let sequence = 0

/** One call over `provider` whose caller presses `key`, warm-transferred to a destination that behaves as `behaviour`. */
const warmCall = async (
  provider: CarrierProviderName,
  behaviour: DestinationBehaviour,
  options: { readonly key?: string; readonly whisperMessage?: string; readonly webhooks?: boolean } = {}
) => {
  const standIn = standIns.get(provider)!
  const index = ++sequence
  const destination = carrierNumber(provider, `+1415555${String(8000 + index)}`)
  standIn.destinationScript(destination, behaviour)
  const account = await transferAccount(
    api,
    { llmUrl: llm.baseUrl, deepgram, tts: speech },
    standIn,
    options.webhooks ? receiver : null
  )
  const tool = await api.post("/api/v1/tools", {
    name: "Transfer the caller",
    definition: {
      type: "transfer_call",
      config: {
        timeout: 20,
        transfer_type: "warm",
        destination: `+1415555${String(8000 + index)}`,
        ...(options.whisperMessage ? { whisper_message: options.whisperMessage } : {})
      }
    }
  }, { token: account.token })
  expect(tool.status).toBe(200)
  const workflowId = await createWorkflow(
    api,
    server,
    account,
    switchboardDefinition(
      tool.body.tool_uuid,
      "Press a key to be put through.",
      "Transfer the caller when they press a key."
    )
  )
  const apiKey = await newApiKey(api, account, ["calls:write", "calls:read"])
  const to = `+1415555${String(6000 + index)}`
  standIn.calleeScript(carrierNumber(provider, to), keyThenListen(options.key ?? "1"))
  const created = await api.post("/api/v2/calls", { agent_id: workflowId, phone_number: to }, { apiKey })
  expect(created.status).toBe(201)
  const run = await endedRun(created.body.data.run_id as number)
  const calls = standIn.calls()
  const call = calls.find((candidate) => candidate.to === carrierNumber(provider, to))!
  const leg = calls.find((candidate) => candidate.to === destination)
  await eventually(async () => call.endedAt !== null || undefined, 10_000, "the caller's call ended")
  return { provider, runId: created.body.data.run_id as number, run, call, leg, to, standIn }
}

const toolCallOf = (run: StoredRun) =>
  run.transcript.flatMap((turn) => turn.tool_calls ?? []).find((call) => call.name === "transfer_the_caller")

describe("warm transfer (transfer_call, transfer_type warm)", () => {
  it(
    "rings the destination on its own call, briefs it with the whisper, then joins it with the caller; the run ends transferred",
    async () => {
      const results = await Promise.all(WARM_CARRIERS.flatMap((provider) => [
        warmCall(provider, "answers", { whisperMessage: "A caller from {{phone_number}} needs billing." })
          .then((result) => ({ ...result, whisper: `A caller from ${result.to} needs billing.` })),
        warmCall(provider, "answers").then((result) => ({ ...result, whisper: SUMMARY }))
      ]))
      for (const { call, leg, provider, run, whisper } of results) {
        expect({ provider, end_reason: run.end_reason, state: run.state }).toEqual({
          provider,
          end_reason: "transferred",
          state: "completed"
        })
        expect(run.gathered_context).toMatchObject({ transfer_outcome: "answered", transfer_type: "warm" })
        expect(JSON.parse(toolCallOf(run).result)).toMatchObject({ outcome: "answered" })
        // The destination was rung from the caller's line, heard the whisper, and was joined with the caller.
        expect({ provider, heard: leg?.heard, from: leg?.from }).toEqual({
          provider,
          heard: [whisper],
          from: call.from
        })
        expect({ provider, joined: call.joinedWith }).toEqual({ provider, joined: leg!.id })
        expect({ provider, caller: call.endedBy, destination: leg!.endedBy }).toEqual({
          provider,
          caller: "transfer",
          destination: "transfer"
        })
        // The summary's tokens are on the run's bill; a written whisper costs none.
        expect({ provider, whisper, summaryBilled: run.prompt_tokens >= SUMMARY_PROMPT_TOKENS }).toEqual({
          provider,
          whisper,
          summaryBilled: whisper === SUMMARY
        })
        // The caller heard the agent ask them to hold while the destination rang.
        expect(run.transcript.some((turn) => turn.role === "assistant" && turn.text.includes(HOLD))).toBe(true)
        expect(call.transfers).toEqual([])
      }
      expect(WARM_CARRIERS.flatMap((provider) => standIns.get(provider)!.callbackFailures())).toEqual([])
    },
    90_000
  )

  it(
    "keeps the caller with the agent when the destination is busy, does not answer or fails: the agent says they are not available and the call goes on",
    async () => {
      const expected = { busy: "busy", "no-answer": "no_answer", fails: "failed" } as const
      const results = await Promise.all(
        WARM_CARRIERS.flatMap((provider) =>
          (Object.keys(expected) as Array<keyof typeof expected>).map((behaviour) =>
            warmCall(provider, behaviour).then((result) => ({ ...result, outcome: expected[behaviour] }))
          )
        )
      )
      for (const { call, leg, outcome, provider, run } of results) {
        expect({ provider, gathered: run.gathered_context }).toMatchObject({
          provider,
          gathered: { transfer_outcome: outcome, transfer_type: "warm" }
        })
        expect(JSON.parse(toolCallOf(run).result)).toMatchObject({ outcome })
        // The caller never left the agent's stream: the agent told them, and they hung up themselves.
        expect({ provider, outcome, end_reason: run.end_reason }).toEqual({
          provider,
          outcome,
          end_reason: "user_hangup"
        })
        expect(run.transcript.some((turn) => turn.role === "assistant" && turn.text === UNAVAILABLE)).toBe(true)
        expect({ provider, endedBy: call.endedBy, joined: call.joinedWith }).toEqual({
          provider,
          endedBy: "far-end",
          joined: null
        })
        expect({ provider, heard: leg?.heard, answered: leg?.answeredAt }).toEqual({
          provider,
          heard: [],
          answered: null
        })
      }
      expect(WARM_CARRIERS.flatMap((provider) => standIns.get(provider)!.callbackFailures())).toEqual([])
    },
    90_000
  )

  it("briefs the destination with who is calling and their last words when the LLM gives no summary", async () => {
    const results = await Promise.all(WARM_CARRIERS.map((provider) => warmCall(provider, "answers", { key: "4" })))
    for (const { leg, run, to } of results) {
      expect(run.end_reason).toBe("transferred")
      expect(leg?.heard).toEqual([
        `A caller from ${to} is being transferred to you. Their last words were: "The caller pressed 4 on the keypad.".`
      ])
    }
  }, 60_000)

  it("sends call.transfer with the destination, the outcome and the transfer's type", async () => {
    const { runId } = await warmCall("twilio", "busy", { webhooks: true })
    const message = await eventually(
      async () =>
        receiver.accepted().find((candidate) => (candidate.body.data as { run_id?: number }).run_id === runId),
      15_000,
      "call.transfer delivered"
    )
    expect(message.body).toMatchObject({
      type: "call.transfer",
      data: {
        run_id: runId,
        transfer: { destination: expect.stringMatching(/^\+1415555\d{4}$/), outcome: "busy", type: "warm" }
      }
    })
  }, 60_000)

  it("refuses a transfer_call config whose transfer_type is not cold or warm", async () => {
    const account = await newAccount(api)
    const refused = await api.post("/api/v1/tools", {
      name: "Transfer the caller",
      definition: { type: "transfer_call", config: { destination: "+14155550100", transfer_type: "lukewarm" } }
    }, { token: account.token })
    expect(refused.status).toBe(422)
    expect(JSON.stringify(refused.body)).toContain("transfer_type")
    const cold = await api.post("/api/v1/tools", {
      name: "Transfer the caller",
      definition: { type: "transfer_call", config: { destination: "+14155550100", transfer_type: "cold" } }
    }, { token: account.token })
    expect(cold.status).toBe(200)
  })
})
