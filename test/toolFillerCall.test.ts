import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount } from "./support/accounts.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { type LoopbackApi, startLoopbackApi } from "./support/loopbackApi.ts"
import { phoneCallsForTests } from "./support/phoneCalls.ts"
import { reply } from "./support/scriptedLlm.ts"

// A phone call through the Twilio stand-in whose agent calls a slow HTTP tool: the caller hears the
// tool's filler line while it runs, and the answer built on its result after it.

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

const phone = phoneCallsForTests(orderModel)
beforeAll(async () => {
  target = await startLoopbackApi()
})
afterAll(() => target?.close())

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

describe("a slow tool on a phone call", () => {
  it(
    "fills the wait with the tool's filler line, then speaks the answer built on the tool's result, in the agent's own voice and language",
    async () => {
      const { api, server, speech, deepgram } = phone
      const account = await newAccount(api)
      await phone.equip(account)
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
      const run = await phone.call(account, workflowId, "+14155550401", [
        { waitForAgent: { quietMs: 600 } },
        { dtmf: "1" },
        // Quiet for longer than the filler's 700 ms but shorter than the tool: the answer is still to come.
        { waitForAgent: { quietMs: 2500 } },
        { hangUp: true }
      ])
      expect(run.callee.protocolErrors).toEqual([])

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
