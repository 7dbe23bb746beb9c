import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { createWorkflow, salesDefinition } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import { salesRolePlay } from "./support/salesRolePlay.ts"
import { type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { useVoiceModels } from "./support/voiceFixtures.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let deepgram: FakeDeepgram
let speech: FakeSpeechApis

beforeAll(async () => {
  ;[llm, deepgram, speech] = await Promise.all([
    startScriptedLlm({ answer: salesRolePlay }),
    startFakeDeepgram(),
    startFakeSpeechApis()
  ])
  server = await startServer()
  api = client(server.url)
}, 60_000)

afterAll(async () => {
  await server?.close()
  await Promise.all([llm?.close(), deepgram?.close(), speech?.close()])
})

const finished = async (path: string, key: string) => {
  const deadline = Date.now() + 120_000
  for (;;) {
    const read = await api.get(path, { apiKey: key })
    expect(read.status).toBe(200)
    if (read.body.data.status === "completed" || read.body.data.status === "failed") return read.body.data
    if (Date.now() > deadline) throw new Error(`${path} still ${read.body.data.status}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

describe("agent tests in voice mode", () => {
  it(
    "call the agent through the speech stack faster than real time: one case passes, one fails for its reason",
    async () => {
      const account = await newAccount(api, "tests-voice")
      await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
      const agentId = await createWorkflow(api, server, account, salesDefinition(), {
        templateContextVariables: { company: "Acme", product: "widgets" },
        dispositionCodes: ["QUALIFIED", "NOT_INTERESTED"]
      })
      const key = await newApiKey(api, account, ["tests:read", "tests:write", "conversations:read"])
      const add = async (body: unknown) => {
        const created = await api.post(`/api/v2/agents/${agentId}/tests`, body, { apiKey: key })
        expect(created.status).toBe(201)
        return created.body.data.id as number
      }
      const eager = await add({
        name: "Eager buyer qualifies on the phone",
        persona: "EAGER: a small-business owner who wants widgets and knows their budget.",
        max_turns: 4,
        expectations: {
          nodes_visited: ["qualify", "end"],
          variables: [{ name: "budget", equals: 5000 }],
          disposition: ["QUALIFIED"],
          max_dead_air_seconds: 3
        }
      })
      const refuser = await add({
        name: "Refuser is qualified anyway",
        persona: "REFUSER: busy, not interested, wants to get off the phone.",
        max_turns: 3,
        expectations: { nodes_visited: ["qualify"] }
      })
      // The agent hears what the simulated caller's TTS said: the Deepgram stand-in is told the lines,
      // one script per call, in the order the calls open (one at a time).
      deepgram.scriptNewStreams([
        ["Yes, tell me more", "About 5000 dollars, and I decide"],
        ["No thanks, not interested."]
      ])

      const started = await api.post(`/api/v2/agents/${agentId}/test-runs`, {
        mode: "voice",
        voice_speed: 4,
        concurrency: 1
      }, { apiKey: key })
      expect(started.status).toBe(202)
      expect(started.body.data).toMatchObject({ mode: "voice", voice_speed: 4 })
      const run = await finished(`/api/v2/agents/${agentId}/test-runs/${started.body.data.id}`, key)
      expect(run.status).toBe("completed")
      expect(run.passed).toBe(false)

      const byCase = new Map(run.cases.map((result: any) => [result.test_id, result]))
      const passed = (byCase.get(eager) as any).conversations[0]
      expect(passed.error).toBeNull()
      expect(passed.failed_expectations).toEqual([])
      expect(passed.passed).toBe(true)
      expect(passed.caller_turns).toBe(2)
      expect(passed.disposition).toBe("QUALIFIED")
      expect(passed.nodes_visited).toEqual(expect.arrayContaining(["start", "qualify", "end"]))
      // What the agent's STT heard of the caller's synthesized speech is in the transcript.
      expect(passed.transcript.filter((turn: any) => turn.role === "user").map((turn: any) => turn.text)).toEqual([
        "Yes, tell me more",
        "About 5000 dollars, and I decide"
      ])
      expect(passed.dead_air_ms.length).toBeGreaterThanOrEqual(2)
      for (const wait of passed.dead_air_ms) expect(wait).toBeLessThan(3000)

      const failed = (byCase.get(refuser) as any).conversations[0]
      expect(failed.passed).toBe(false)
      expect(failed.error).toBeNull()
      expect(failed.failed_expectations).toEqual([
        { expectation: "nodes_visited", reason: expect.stringContaining("node \"qualify\" was not visited") }
      ])

      // Each conversation is a voice run of the test mode, ended and billed as a test run.
      const conversation = await api.get(`/api/v2/conversations/${passed.conversation_id}`, { apiKey: key })
      expect(conversation.status).toBe(200)
      expect(JSON.stringify(conversation.body)).toContain("testcall")
      // The agent really spoke: the TTS stand-in was asked for the agent's lines and the caller's.
      const spoken = speech.requests.map((request) => request.text)
      expect(spoken).toEqual(expect.arrayContaining(["Yes, tell me more", "What budget do you have in mind?"]))
    },
    180_000
  )

  it("with an interrupting caller, exercise barge-in: the agent's cut-off reply is kept as heard", async () => {
    const account = await newAccount(api, "tests-voice-interrupt")
    await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
    const definition = salesDefinition()
    const qualify = definition.nodes.find((node) => node.id === "qualify")!
    Object.assign(qualify.data, { allow_interrupt: true })
    const agentId = await createWorkflow(api, server, account, definition, {
      templateContextVariables: { company: "Acme", product: "widgets" },
      dispositionCodes: ["QUALIFIED", "NOT_INTERESTED"]
    })
    const key = await newApiKey(api, account, ["tests:read", "tests:write"])
    const created = await api.post(`/api/v2/agents/${agentId}/tests`, {
      name: "Impatient buyer",
      persona: "EAGER: wants widgets, knows the budget, cuts the agent off.",
      max_turns: 4,
      interrupts: true,
      expectations: { nodes_visited: ["qualify", "end"], variables: [{ name: "budget", equals: 5000 }] }
    }, { apiKey: key })
    expect(created.status).toBe(201)
    expect(created.body.data.interrupts).toBe(true)
    deepgram.scriptNewStreams([["Yes, tell me more", "About 5000 dollars, and I decide"]])

    const started = await api.post(`/api/v2/agents/${agentId}/test-runs`, { mode: "voice", voice_speed: 4 }, {
      apiKey: key
    })
    expect(started.status).toBe(202)
    const run = await finished(`/api/v2/agents/${agentId}/test-runs/${started.body.data.id}`, key)
    const conversation = run.cases[0].conversations[0]
    expect(conversation.error).toBeNull()
    expect(conversation.failed_expectations).toEqual([])
    // The budget question was cut off by the caller: recorded as interrupted, only what was heard.
    const question = conversation.transcript.find((turn: any) =>
      turn.node_id === "qualify" && turn.role === "assistant"
    )
    expect(question.interrupted).toBe(true)
    expect("What budget do you have in mind?".startsWith(question.text.replace(/[.…]+$/, ""))).toBe(true)
    expect(question.text.length).toBeLessThan("What budget do you have in mind?".length)
  }, 180_000)

  it("refuses a voice run whose speed is out of range, naming the field", async () => {
    const account = await newAccount(api, "tests-voice-bad")
    const agentId = await createWorkflow(api, server, account, salesDefinition())
    const key = await newApiKey(api, account, ["tests:read", "tests:write"])
    const reply = await api.post(`/api/v2/agents/${agentId}/test-runs`, { mode: "voice", voice_speed: 50 }, {
      apiKey: key
    })
    expect(reply.status).toBe(422)
    expect(JSON.stringify(reply.body)).toContain("voice_speed")
  })
})
