import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import type { CalleeScript } from "./support/calleeScript.ts"
import {
  carrierNumber,
  type CarrierProviderName,
  carrierProviders,
  type CarrierStandIn,
  startCarrierStandIn
} from "./support/carrierStandIns.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony, eventually } from "./support/dialerFixtures.ts"
import { decodeDtmf } from "./support/dtmfDecoder.ts"
import { connectCallee } from "./support/fakeCallee.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { useVoiceModels } from "./support/voiceFixtures.ts"

// Callers who answer with their keypad, over every carrier's media stream and the browser call,
// all at once (each call is its own organization, and the model answers from what it is asked).

let server: RunningServer
let api: Client
const standIns = new Map<CarrierProviderName, CarrierStandIn>()
let deepgram: FakeDeepgram
let speech: FakeSpeechApis
let llm: ScriptedLlm

const ASK_ACCOUNT = "Please key in your four digit account number."
const DIALED = "Done, I have entered the extension."
/** The extension the agent keys in for the caller (a pause, then four keys and the pound key). */
const EXTENSION = "w42#7"
const GOODBYE = "Thank you, that account is on file. Goodbye!"

/** The model of a phone menu: it follows the keys it is told the caller pressed. */
const menuModel = (request: any): ReturnType<typeof reply.content> => {
  const messages: ReadonlyArray<{ role: string; content?: string }> = request.messages ?? []
  const last = messages.at(-1)
  if (last?.role === "tool") return reply.content(last.content?.includes(EXTENSION) ? DIALED : ASK_ACCOUNT)
  const said = last?.role === "user" ? String(last.content ?? "") : ""
  if (said === "The caller pressed 9 on the keypad.") {
    return reply.toolCalls([{ name: "press_keys", arguments: { digits: EXTENSION } }])
  }
  if (said === "The caller pressed 2 on the keypad.") {
    // At the menu the key takes the Support edge; at the support step (asked again there) it asks for the number.
    const offered: ReadonlyArray<string> = (request.tools ?? []).map((tool: any) => tool.function?.name)
    return offered.includes("support")
      ? reply.toolCalls([{ name: "support", arguments: {} }])
      : reply.content(ASK_ACCOUNT)
  }
  if (said === "The caller pressed 4 0 2 1 on the keypad.") return reply.content(GOODBYE)
  return reply.content(`I did not understand: ${said}`)
}

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

/** A phone menu: one key chooses (collected at once), the support step collects a four-digit account number. */
const menuDefinition = {
  nodes: [
    node("start", "startCall", {
      name: "Menu",
      greeting: "Press 1 for sales or 2 for support.",
      prompt: "Route the caller by the key they press.",
      collect_digits: { max_digits: 1 }
    }),
    node("support", "agentNode", {
      name: "Support",
      prompt: "Ask for the account number, then thank them.",
      collect_digits: { max_digits: 4, terminator: "#", timeout_ms: 4000, variable: "account_number" }
    }),
    node("sales", "agentNode", { name: "Sales", prompt: "Sell." }),
    node("end", "endCall", { name: "End", prompt: "Say goodbye." })
  ],
  edges: [
    { id: "e1", source: "start", target: "support", data: { label: "Support", condition: "The caller pressed 2" } },
    { id: "e2", source: "start", target: "sales", data: { label: "Sales", condition: "The caller pressed 1" } },
    { id: "e3", source: "support", target: "end", data: { label: "Done", condition: "The account number is known" } },
    { id: "e4", source: "sales", target: "end", data: { label: "Sold", condition: "Sold" } }
  ]
}

const keypadScript: CalleeScript = [
  { waitForAgent: { quietMs: 600 } },
  { dtmf: "2" },
  { waitForAgent: { quietMs: 600 } },
  { dtmf: "4" },
  { dtmf: "0" },
  { dtmf: "2" },
  { dtmf: "1" },
  { waitForAgent: { quietMs: 1500 } },
  { hangUp: true }
]

beforeAll(async () => {
  ;[deepgram, speech, llm] = await Promise.all([
    startFakeDeepgram(),
    startFakeSpeechApis(),
    startScriptedLlm({ answer: menuModel })
  ])
  for (const provider of carrierProviders) standIns.set(provider, await startCarrierStandIn(provider))
  server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: "200" }, { ownDatabase: true })
  api = client(server.url)
}, 60_000)
afterAll(async () => {
  await server?.close()
  await Promise.all([...standIns.values()].map((standIn) => standIn.close()))
  await Promise.all([deepgram?.close(), speech?.close(), llm?.close()])
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

interface StoredRun {
  readonly transcript: ReadonlyArray<{ role: string; text: string; keypad?: string; node_id: string }>
  readonly gathered_context: Record<string, unknown>
}

const endedRun = (runId: number) =>
  eventually(
    async () => {
      const [run] = await query<StoredRun & { ended_at: unknown; busy_token: unknown }>((sql) =>
        sql`SELECT * FROM runs WHERE id = ${runId}`
      )
      return run?.ended_at && run.busy_token === null ? run : undefined
    },
    45_000,
    `run ${runId} ended`
  )

const keypadAccount = async (): Promise<TestAccount> => {
  const account = await newAccount(api)
  await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
  return account
}

/** A single call over `provider`'s stand-in, answered by the keypad caller; its run id. */
const carrierCall = async (provider: CarrierProviderName, index: number) => {
  const standIn = standIns.get(provider)!
  const account = await keypadAccount()
  await carrierTelephony(api, { token: account.token }, standIn)
  const workflowId = await createWorkflow(api, server, account, menuDefinition)
  const key = await newApiKey(api, account, ["calls:write", "calls:read"])
  const to = `+1415555020${index}`
  standIn.calleeScript(carrierNumber(provider, to), keypadScript)
  const created = await api.post("/api/v2/calls", { agent_id: workflowId, phone_number: to }, { apiKey: key })
  expect(created.status).toBe(201)
  return created.body.data.run_id as number
}

const browserCall = async () => {
  const account = await keypadAccount()
  const workflowId = await createWorkflow(api, server, account, menuDefinition)
  const started = await api.post(`/api/v1/workflow/${workflowId}/browser-calls`, {}, { token: account.token })
  expect(started.status).toBe(200)
  const callee = await connectCallee({ url: started.body.media_url, provider: "browser", script: keypadScript })
  const report = await callee.done
  expect(report.protocolErrors).toEqual([])
  return started.body.workflow_run_id as number
}

describe("the caller's keypad", () => {
  it(
    "reaches the conversation from every carrier's media stream and the browser call: a menu choice takes the edge, the account number is collected into a variable, and the transcript shows the keys",
    async () => {
      const runs = await Promise.all([
        ...carrierProviders.map((provider, index) =>
          carrierCall(provider, index).then((runId) => ({ channel: provider as string, runId }))
        ),
        browserCall().then((runId) => ({ channel: "browser", runId }))
      ])
      const ended = await Promise.all(runs.map(async ({ channel, runId }) => ({ channel, run: await endedRun(runId) })))
      for (const { channel, run } of ended) {
        expect({ channel, turns: run.transcript.map((turn) => [turn.role, turn.text, turn.keypad ?? null]) }).toEqual({
          channel,
          turns: [
            ["assistant", "Press 1 for sales or 2 for support.", null],
            ["user", "The caller pressed 2 on the keypad.", "2"],
            ["assistant", ASK_ACCOUNT, null],
            ["user", "The caller pressed 4 0 2 1 on the keypad.", "4021"],
            ["assistant", GOODBYE, null]
          ]
        })
        // The choice moved the conversation along its edge; the answer was given at the support step.
        expect(run.transcript[3]!.node_id).toBe("support")
        expect(run.gathered_context).toMatchObject({ account_number: "4021" })
      }
      // Each call's model was told of the key at the menu, with the menu's edges to choose from.
      const chose = llm.requests.filter((request) =>
        request.body.messages.at(-1)?.content === "The caller pressed 2 on the keypad." &&
        request.toolNames.includes("support")
      )
      expect(chose).toHaveLength(runs.length)
      expect(chose.every((request) => request.toolNames.includes("sales"))).toBe(true)
    },
    90_000
  )
})

/** A call whose agent has the send_dtmf tool: the caller presses 9, the agent keys in the extension. */
const dialerDefinition = (toolUuid: string) => ({
  nodes: [
    node("start", "startCall", {
      name: "Start",
      greeting: "Press 9 and I will dial the extension for you.",
      prompt: "Dial the extension when asked.",
      collect_digits: { max_digits: 1 },
      tool_uuids: [toolUuid]
    }),
    node("end", "endCall", { name: "End", prompt: "Say goodbye." })
  ],
  edges: [{ id: "e1", source: "start", target: "end", data: { label: "Finish", condition: "The caller is done" } }]
})

const dialerScript: CalleeScript = [
  { waitForAgent: { quietMs: 600 } },
  { dtmf: "9" },
  { waitForAgent: { quietMs: 1200 } },
  { hangUp: true }
]

describe("the agent's keypad (send_dtmf)", () => {
  it(
    "plays the keys the model asks for as DTMF tones that a receiver on the far end of every carrier decodes",
    async () => {
      const calls = carrierProviders.map(async (provider, index) => {
        const standIn = standIns.get(provider)!
        const account = await keypadAccount()
        await carrierTelephony(api, { token: account.token }, standIn)
        const tool = await api.post("/api/v1/tools", {
          name: "Press keys",
          description: "Presses keys on the phone call",
          definition: { type: "send_dtmf" }
        }, { token: account.token })
        expect(tool.status).toBe(200)
        const workflowId = await createWorkflow(api, server, account, dialerDefinition(tool.body.tool_uuid))
        const key = await newApiKey(api, account, ["calls:write", "calls:read"])
        const to = `+1415555030${index}`
        standIn.calleeScript(carrierNumber(provider, to), dialerScript)
        const created = await api.post("/api/v2/calls", { agent_id: workflowId, phone_number: to }, { apiKey: key })
        expect(created.status).toBe(201)
        const runId = created.body.data.run_id as number
        const run = await endedRun(runId)
        const call = standIn.calls().find((candidate) => candidate.to === carrierNumber(provider, to))!
        const report = (await call.calleeDone)!
        return { provider, run, report }
      })
      for (const { provider, report, run } of await Promise.all(calls)) {
        // What the far end heard: the greeting, then the keys (the pause is no key), then the agent's words.
        expect({ provider, keys: decodeDtmf(report.agent, report.sampleRate) }).toEqual({ provider, keys: "42#7" })
        const dialed = run.transcript.find((turn) => turn.role === "assistant" && turn.text === "")
        expect(dialed).toBeDefined()
        expect(run.transcript.at(-1)).toMatchObject({ role: "assistant", text: DIALED })
      }
    },
    90_000
  )

  it("is refused by the tool test endpoint: it acts on a live call", async () => {
    const account = await keypadAccount()
    const tool = await api.post("/api/v1/tools", { name: "Keys", definition: { type: "send_dtmf" } }, {
      token: account.token
    })
    expect(tool.status).toBe(200)
    const tested = await api.post(`/api/v1/tools/${tool.body.tool_uuid}/test`, { llm_params: { digits: "1" } }, {
      token: account.token
    })
    expect(tested.status).toBe(422)
  })
})
