import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import type { CalleeScript } from "./support/calleeScript.ts"
import { carrierNumber, type CarrierStandIn, startCarrierStandIn } from "./support/carrierStandIns.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony, eventually } from "./support/dialerFixtures.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { type LoopbackApi, startLoopbackApi } from "./support/loopbackApi.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { useVoiceModels } from "./support/voiceFixtures.ts"

// A phone call through the Twilio stand-in whose agent calls a slow HTTP tool: the caller hears the
// tool's filler line while it runs, and the answer built on its result after it.

let server: RunningServer
let api: Client
let carrier: CarrierStandIn
let deepgram: FakeDeepgram
let speech: FakeSpeechApis
let llm: ScriptedLlm
let target: LoopbackApi

const GREETING = "Press 1 and I will check your order."
const FILLER = "One moment while I look that up."
const ANSWER = "Your order has shipped and arrives tomorrow."
const TOOL_MS = 1800

const orderModel = (request: any): ReturnType<typeof reply.content> => {
  const last = (request.messages ?? []).at(-1)
  if (last?.role === "tool") return reply.content(ANSWER)
  if (last?.role === "user" && last.content === "The caller pressed 1 on the keypad.") {
    return reply.toolCalls([{ name: "check_order", arguments: { ms: TOOL_MS } }])
  }
  return reply.content("Sorry?")
}

beforeAll(async () => {
  ;[deepgram, speech, llm, target] = await Promise.all([
    startFakeDeepgram(),
    startFakeSpeechApis(),
    startScriptedLlm({ answer: orderModel }),
    startLoopbackApi()
  ])
  carrier = await startCarrierStandIn("twilio")
  server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: "200" }, { ownDatabase: true })
  api = client(server.url)
}, 60_000)
afterAll(async () => {
  await server?.close()
  await carrier?.close()
  await Promise.all([deepgram?.close(), speech?.close(), llm?.close(), target?.close()])
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

describe("a slow tool on a phone call", () => {
  it(
    "fills the wait with the tool's filler line, then speaks the answer built on the tool's result, in the agent's own voice and language",
    async () => {
      const account = await newAccount(api)
      await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
      await carrierTelephony(api, { token: account.token }, carrier)
      const tool = await api.post("/api/v1/tools", {
        name: "Check order",
        description: "Looks the caller's order up",
        definition: {
          type: "http_api",
          config: {
            method: "GET",
            url: `${target.url}/slow`,
            parameters: [{ name: "ms", type: "number", description: "delay" }],
            timeout_ms: 5000,
            filler_message: FILLER
          }
        }
      }, { token: account.token })
      expect(tool.status).toBe(200)
      const workflowId = await createWorkflow(api, server, account, {
        nodes: [
          node("start", "startCall", {
            name: "Start",
            greeting: GREETING,
            prompt: "Check the order when asked.",
            collect_digits: { max_digits: 1 },
            tool_uuids: [tool.body.tool_uuid]
          }),
          node("end", "endCall", { name: "End", prompt: "Say goodbye." })
        ],
        edges: [{
          id: "e1",
          source: "start",
          target: "end",
          data: { label: "Finish", condition: "The caller is done" }
        }]
      }, { configurations: { overrides: { tts_voice: "agent-voice", stt_language: "de" } } })
      const script: CalleeScript = [
        { waitForAgent: { quietMs: 600 } },
        { dtmf: "1" },
        // Quiet for longer than the filler's 700 ms but shorter than the tool: the answer is still to come.
        { waitForAgent: { quietMs: 2500 } },
        { hangUp: true }
      ]
      const to = "+14155550401"
      carrier.calleeScript(carrierNumber("twilio", to), script)
      const key = await newApiKey(api, account, ["calls:write", "calls:read"])
      const created = await api.post("/api/v2/calls", { agent_id: workflowId, phone_number: to }, { apiKey: key })
      expect(created.status).toBe(201)
      const runId = created.body.data.run_id as number

      const run = await eventually(
        async () => {
          const [row] = await query<{ ended_at: unknown; busy_token: unknown; transcript: ReadonlyArray<any> }>((sql) =>
            sql`SELECT ended_at, busy_token, transcript FROM runs WHERE id = ${runId}`
          )
          return row?.ended_at && row.busy_token === null ? row : undefined
        },
        45_000,
        "call ended"
      )
      const call = carrier.calls().find((candidate) => candidate.to === carrierNumber("twilio", to))!
      const report = (await call.calleeDone)!
      expect(report.protocolErrors).toEqual([])

      // Spoken in this order: the greeting, the filler while the tool ran, the answer after its result.
      const spoken = speech.requests.filter((request) => request.api !== "openai-transcription").map((request) =>
        request.text
      )
      expect(spoken.filter((text) => [GREETING, FILLER, ANSWER].includes(text))).toEqual([GREETING, FILLER, ANSWER])
      expect(target.requests.filter((request) => request.path === "/slow")).toHaveLength(1)
      // The agent's own voice and language, over the organization's (test-voice, en).
      const synthesized = speech.requests.filter((request) => request.api === "elevenlabs")
      expect(synthesized.length).toBeGreaterThanOrEqual(3)
      expect(synthesized.every((request) => request.path.startsWith("/v1/text-to-speech/agent-voice/"))).toBe(true)
      expect(deepgram.connections.length).toBeGreaterThan(0)
      expect(deepgram.connections.every((connection) => connection.query.get("language") === "de")).toBe(true)
      // The filler turn carries the tool's call and result; its audio began while the tool was still
      // running (the filler is said 700 ms into the call, whose answer comes 1.8 s in), not after it.
      const toolTurn = run.transcript.find((turn) => Array.isArray(turn.tool_calls) && turn.tool_calls.length > 0)
      expect(toolTurn).toMatchObject({ role: "assistant", text: FILLER })
      expect(toolTurn.tool_calls[0]).toMatchObject({ name: "check_order", status: "success" })
      expect(toolTurn.trace.first_audio_ms - toolTurn.trace.first_token_ms).toBeLessThan(TOOL_MS - 700)
      expect(run.transcript.at(-1)).toMatchObject({ role: "assistant", text: ANSWER })
    },
    90_000
  )
})
