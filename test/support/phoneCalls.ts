import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll } from "vitest"
import { newApiKey, type TestAccount } from "./accounts.ts"
import type { CalleeScript } from "./calleeScript.ts"
import { carrierNumber, type CarrierStandIn, startCarrierStandIn } from "./carrierStandIns.ts"
import { type Client, client } from "./client.ts"
import { carrierTelephony, eventually } from "./dialerFixtures.ts"
import type { CalleeReport } from "./fakeCallee.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./fakeSpeechApis.ts"
import { type ScriptedLlm, type ScriptedReply, startScriptedLlm } from "./scriptedLlm.ts"
import { type RunningServer, startServer } from "./server.ts"
import { useVoiceModels } from "./voiceFixtures.ts"

export interface PhoneCalls {
  readonly server: RunningServer
  readonly api: Client
  /** The Twilio stand-in every call goes through; its callees follow the scripts `call` gives them. */
  readonly carrier: CarrierStandIn
  readonly deepgram: FakeDeepgram
  readonly speech: FakeSpeechApis
  readonly llm: ScriptedLlm
  readonly query: <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) => Promise<
    ReadonlyArray<T>
  >
  /** The account's voice models and telephony point at the stand-ins. */
  readonly equip: (account: TestAccount) => Promise<void>
  /**
   * Calls `to` with the agent through `POST /api/v2/calls`, its callee following `script`, and
   * waits until the call is over and its session has stored the run: the run and the callee's report.
   */
  readonly call: (account: TestAccount, workflowId: number, to: string, script: CalleeScript) => Promise<{
    readonly runId: number
    readonly transcript: ReadonlyArray<any>
    readonly callee: CalleeReport
  }>
}

/**
 * A server on a database of its own with the stand-ins a phone call needs (Twilio, Deepgram, the
 * speech APIs and an LLM answering each request with `answer`), started before the file's tests
 * and stopped after them; read its fields inside tests only.
 */
export const phoneCallsForTests = (answer: (request: any) => ScriptedReply): PhoneCalls => {
  let server: RunningServer | undefined
  let api: Client | undefined
  let carrier: CarrierStandIn | undefined
  let deepgram: FakeDeepgram | undefined
  let speech: FakeSpeechApis | undefined
  let llm: ScriptedLlm | undefined
  beforeAll(async () => {
    ;[deepgram, speech, llm] = await Promise.all([
      startFakeDeepgram(),
      startFakeSpeechApis(),
      startScriptedLlm({ answer })
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
  const query: PhoneCalls["query"] = (text) => server!.run(Effect.flatMap(SqlClient.SqlClient, text))
  return {
    get server() {
      return server!
    },
    get api() {
      return api!
    },
    get carrier() {
      return carrier!
    },
    get deepgram() {
      return deepgram!
    },
    get speech() {
      return speech!
    },
    get llm() {
      return llm!
    },
    query,
    equip: async (account) => {
      await useVoiceModels(api!, account, { llmUrl: llm!.baseUrl, deepgram: deepgram!, tts: speech! })
      await carrierTelephony(api!, { token: account.token }, carrier!)
    },
    call: async (account, workflowId, to, script) => {
      carrier!.calleeScript(carrierNumber("twilio", to), script)
      const key = await newApiKey(api!, account, ["calls:write", "calls:read"])
      const created = await api!.post("/api/v2/calls", { agent_id: workflowId, phone_number: to }, { apiKey: key })
      if (created.status !== 201) throw new Error(`call refused: ${created.status} ${JSON.stringify(created.body)}`)
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
      const placed = carrier!.calls().find((candidate) => candidate.to === carrierNumber("twilio", to))!
      return { runId, transcript: run.transcript, callee: (await placed.calleeDone)! }
    }
  }
}
