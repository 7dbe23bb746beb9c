import { describe, expect, it } from "vitest"
import { newAccount } from "./support/accounts.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { untilIndexed, uploadDocument } from "./support/knowledgeDocuments.ts"
import { phoneCallsForTests } from "./support/phoneCalls.ts"
import { reply } from "./support/scriptedLlm.ts"

// A phone call through the Twilio stand-in to an agent whose node retrieves automatically: the
// caller's keypad entry is searched in the node's document before the model answers, the answer
// built on the passage is spoken, and the turn's trace reports the retrieval's latency.

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

const phone = phoneCallsForTests(officeModel)

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

describe("automatic knowledge retrieval on a phone call", () => {
  it(
    "speaks the answer built on the passage found for the caller's turn and traces the retrieval's latency",
    async () => {
      const { api, server, speech } = phone
      const account = await newAccount(api)
      const credentials = { token: account.token }
      await phone.equip(account)
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
      const run = await phone.call(account, workflowId, "+14155550431", [
        { waitForAgent: { quietMs: 600 } },
        { dtmf: "1" },
        { waitForAgent: { quietMs: 1000 } },
        { hangUp: true }
      ])
      expect(run.callee.protocolErrors).toEqual([])
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
