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
import { untilIndexed, uploadDocument } from "./support/knowledgeDocuments.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { useVoiceModels } from "./support/voiceFixtures.ts"

// A phone call through the Twilio stand-in to an agent whose node retrieves automatically: the
// caller's keypad entry is searched in the node's document before the model answers, the answer
// built on the passage is spoken, and the turn's trace reports the retrieval's latency.

let server: RunningServer
let api: Client
let carrier: CarrierStandIn
let deepgram: FakeDeepgram
let speech: FakeSpeechApis
let llm: ScriptedLlm

const GREETING = "Press 1 for our opening hours."
const ANSWER = "We are open Tuesday to Saturday from 10 am to 7 pm."
const HANDBOOK = "# Option 1\n\nA caller who pressed 1 on the keypad hears the opening hours: the Porto office is " +
  "open Tuesday to Saturday from 10 am to 7 pm.\n"

/** Answers with the hours only when the passage holding them came with the instructions. */
const officeModel = (request: any): ReturnType<typeof reply.content> => {
  const messages = request.messages ?? []
  const instructions = String(messages[0]?.content ?? "")
  const last = messages.at(-1)
  return last?.role === "user" && instructions.includes("Tuesday to Saturday from 10 am to 7 pm")
    ? reply.content(ANSWER)
    : reply.content("Sorry?")
}

beforeAll(async () => {
  ;[deepgram, speech, llm] = await Promise.all([
    startFakeDeepgram(),
    startFakeSpeechApis(),
    startScriptedLlm({ answer: officeModel })
  ])
  carrier = await startCarrierStandIn("twilio")
  server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: "200" }, { ownDatabase: true })
  api = client(server.url)
}, 60_000)
afterAll(async () => {
  await server?.close()
  await carrier?.close()
  await Promise.all([deepgram?.close(), speech?.close(), llm?.close()])
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

describe("automatic knowledge retrieval on a phone call", () => {
  it(
    "speaks the answer built on the passage found for the caller's turn and traces the retrieval's latency",
    async () => {
      const account = await newAccount(api)
      const credentials = { token: account.token }
      await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
      await carrierTelephony(api, credentials, carrier)
      const uploaded = await uploadDocument(api, credentials, "office.md", "text/markdown", HANDBOOK)
      await untilIndexed(api, credentials, uploaded.document_uuid)
      const workflowId = await createWorkflow(api, server, account, {
        nodes: [
          node("start", "startCall", {
            name: "Start",
            greeting: GREETING,
            prompt: "Answer from the office's documents.",
            collect_digits: { max_digits: 1 },
            document_uuids: [uploaded.document_uuid],
            knowledge_retrieval: "auto"
          }),
          node("end", "endCall", { name: "End", prompt: "Say goodbye." })
        ],
        edges: [{
          id: "e1",
          source: "start",
          target: "end",
          data: { label: "Finish", condition: "The caller is done" }
        }]
      })
      const script: CalleeScript = [
        { waitForAgent: { quietMs: 600 } },
        { dtmf: "1" },
        { waitForAgent: { quietMs: 1000 } },
        { hangUp: true }
      ]
      const to = "+14155550431"
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
      expect((await call.calleeDone)!.protocolErrors).toEqual([])
      const spoken = speech.requests.filter((request) => request.api !== "openai-transcription").map((request) =>
        request.text
      )
      expect(spoken).toContain(ANSWER)

      const pressed = run.transcript.find((turn) => turn.role === "user" && turn.keypad === "1")
      expect(pressed.retrievals[0]).toMatchObject({ status: "success", retrieval: "full_text" })
      expect(pressed.retrievals[0].sources[0]).toMatchObject({
        document_uuid: uploaded.document_uuid,
        filename: "office.md",
        heading: "Option 1"
      })
      const answered = run.transcript.find((turn) => turn.role === "assistant" && turn.text === ANSWER)
      expect(answered.trace.retrieval_ms).toBe(Math.round(pressed.retrievals[0].latency_ms))
    },
    90_000
  )
})
