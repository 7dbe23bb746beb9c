import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { sine, wavFile } from "./support/audioClips.ts"
import type { CalleeScript } from "./support/calleeScript.ts"
import { carrierNumber } from "./support/carrierStandIns.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { eventually } from "./support/dialerFixtures.ts"
import { phoneCallsForTests } from "./support/phoneCalls.ts"
import { reply } from "./support/scriptedLlm.ts"
import { voiceDefinition } from "./support/voiceFixtures.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.ts"

// Outbound calls through the Twilio stand-in whose agent detects answering machines itself: the
// callee is a voicemail greeting (eSpeak NG) ending in a beep, or a person saying hello.

const GREETING_LINES = [
  "Hi, you have reached Dana.",
  "I can't come to the phone right now.",
  "Please leave a message after the tone."
]
const machineScript: CalleeScript = [
  ...GREETING_LINES.map((say) => ({ say })),
  { tone: { hz: 1000, ms: 400 } },
  // A machine records in silence until the caller hangs up (or its own limit).
  { silence: 25_000 },
  { hangUp: true }
]
const MESSAGE = "Hi {{first_name}}, this is Acme about your solar quote. Please call us back."

const phone = phoneCallsForTests(() => reply.content("Okay."))
let receiver: WebhookReceiver
beforeAll(async () => {
  receiver = await startWebhookReceiver()
})
afterAll(() => receiver?.close())

/** Places the call (the callee following `script`, its speech-to-text transcribing `heard`) and waits for its stored run. */
const placeCall = async (
  account: TestAccount,
  workflowId: number,
  to: string,
  script: CalleeScript,
  heard: ReadonlyArray<string | ReadonlyArray<string>>
) => {
  phone.carrier.calleeScript(carrierNumber("twilio", to), script)
  const key = await newApiKey(phone.api, account, ["calls:write", "calls:read"])
  const created = await phone.api.post("/api/v2/calls", {
    agent_id: workflowId,
    phone_number: to,
    variables: { first_name: "Dana" }
  }, { apiKey: key })
  expect(created.status).toBe(201)
  const runId = created.body.data.run_id as number
  phone.deepgram.script(`talkgraph-run-${runId}`, heard)
  const run = await eventually(
    async () => {
      const [row] = await phone.query<Record<string, any>>((sql) =>
        sql`SELECT ended_at, busy_token, end_reason, disposition, transcript FROM runs WHERE id = ${runId}`
      )
      return row?.ended_at && row.busy_token === null ? row : undefined
    },
    60_000,
    "call ended"
  )
  const placed = phone.carrier.calls().find((candidate) => candidate.to === carrierNumber("twilio", to))!
  return { runId, callId: created.body.data.id as string, key, run, callee: (await placed.calleeDone)! }
}

const equippedAgent = async (
  voicemail: Record<string, unknown>,
  prepare: (account: TestAccount) => Promise<void> = async () => {}
) => {
  const account = await newAccount(phone.api)
  await phone.equip(account)
  await prepare(account)
  const workflowId = await createWorkflow(phone.api, phone.server, account, voiceDefinition(), {
    configurations: { voicemail }
  })
  return { account, workflowId }
}

describe("voicemail detection on a phone call", () => {
  it("hangs up on a voicemail greeting with disposition voicemail, and sends call.voicemail", async () => {
    const { account, workflowId } = await equippedAgent({ detection: "in_call", action: "hang_up" })
    const endpoint = await phone.api.post("/api/v1/webhooks", { url: receiver.url, event_types: ["call.voicemail"] }, {
      token: account.token
    })
    expect(endpoint.status).toBe(200)
    receiver.useSecret(endpoint.body.secret)

    const { callId, callee, key, run, runId } = await placeCall(
      account,
      workflowId,
      "+14155550811",
      machineScript,
      [GREETING_LINES]
    )
    expect(run).toMatchObject({ end_reason: "voicemail", disposition: "voicemail", transcript: [] })
    // Ended by the agent during the greeting: nothing said to the machine.
    expect(callee.endedBy).not.toBe("callee")
    expect(callee.agentBursts).toEqual([])
    expect(callee.utterances.at(-1)!.startMs).toBeLessThan(15_000)
    // The call's outcome is voicemail, as with the carrier's own detection: campaigns retry it as such.
    const call = await eventually(
      async () => {
        const found = (await phone.api.get(`/api/v2/calls/${callId}`, { apiKey: key })).body.data
        return found.outcome === null ? undefined : found
      },
      30_000,
      "call outcome"
    )
    expect(call.outcome).toBe("voicemail")

    const message = await eventually(
      async () => receiver.accepted().find((candidate) => candidate.body.type === "call.voicemail"),
      30_000,
      "call.voicemail delivered"
    )
    expect(message.body.data).toMatchObject({ run_id: runId, end_reason: "voicemail", disposition: "voicemail" })
    expect(receiver.badSignatures).toEqual([])
  }, 120_000)

  it("leaves the message after the beep, its variables filled in, then hangs up", async () => {
    const { account, workflowId } = await equippedAgent({
      detection: "in_call",
      action: "leave_message",
      message_text: MESSAGE
    })
    const { callee, run } = await placeCall(account, workflowId, "+14155550812", machineScript, [GREETING_LINES])
    const spoken = "Hi Dana, this is Acme about your solar quote. Please call us back."
    expect(run).toMatchObject({ end_reason: "voicemail", disposition: "voicemail" })
    expect(run.transcript.map((turn: any) => [turn.role, turn.text])).toEqual([["assistant", spoken]])
    expect(phone.speech.requests.map((request) => request.text)).toContain(spoken)
    // The agent spoke once, after the beep ended, and the call ended before the machine's own limit.
    const beep = callee.utterances.find((utterance) => utterance.text.startsWith("(tone"))!
    expect(callee.agentBursts.length).toBeGreaterThan(0)
    expect(callee.agentBursts[0]!.startMs).toBeGreaterThanOrEqual(beep.endMs!)
    expect(callee.agentBursts[0]!.startMs - beep.endMs!).toBeLessThan(3000)
    expect(callee.endedBy).not.toBe("callee")
  }, 120_000)

  it("leaves a stored recording of the organization's own as the message", async () => {
    // A two-second clip of the organization's, uploaded and registered as greetings' clips are,
    // before the agent names it (an agent naming a clip the organization lacks is refused).
    const { account, workflowId } = await equippedAgent({
      detection: "in_call",
      action: "leave_message",
      message_recording_id: "voicemail-message"
    }, async (account) => {
      const clip = wavFile(sine(300, 16000, 2, 0.3), 16000)
      const grant = await phone.api.post("/api/v1/workflow-recordings/upload-url", {
        files: [{ filename: "message.wav", mime_type: "audio/wav", file_size: clip.length }]
      }, { token: account.token })
      expect(grant.status).toBe(200)
      const item = grant.body.items[0]
      const put = await fetch(item.upload_url, { method: "PUT", headers: { "content-type": "audio/wav" }, body: clip })
      expect(put.status).toBeLessThan(300)
      const registered = await phone.api.post("/api/v1/workflow-recordings/", {
        recordings: [{ recording_id: "voicemail-message", storage_key: item.storage_key }]
      }, { token: account.token })
      expect(registered.status).toBe(200)
    })

    const { callee, run } = await placeCall(account, workflowId, "+14155550814", machineScript, [GREETING_LINES])
    expect(run).toMatchObject({ end_reason: "voicemail", disposition: "voicemail" })
    expect(run.transcript.map((turn: any) => [turn.role, turn.text])).toEqual([["assistant", "(voicemail recording)"]])
    const beep = callee.utterances.find((utterance) => utterance.text.startsWith("(tone"))!
    const heard = callee.agentBursts.filter((burst) => burst.startMs >= beep.endMs!)
    expect(heard).toHaveLength(1)
    expect(heard[0]!.endMs - heard[0]!.startMs).toBeGreaterThan(1800)
    expect(callee.agentBursts).toEqual(heard)
  }, 120_000)

  it("greets a person who says hello, and the conversation goes on", async () => {
    const { account, workflowId } = await equippedAgent({ detection: "in_call", action: "hang_up" })
    const { callee, run } = await placeCall(account, workflowId, "+14155550813", [
      { say: "Hello?" },
      { waitForAgent: { quietMs: 800, timeoutMs: 20_000 } },
      { hangUp: true }
    ], ["Hello?"])
    expect(run.end_reason).toBe("user_hangup")
    expect(run.disposition).not.toBe("voicemail")
    expect(run.transcript.map((turn: any) => [turn.role, turn.text])).toEqual([
      ["assistant", "Hi Dana, this is Acme calling about solar panels."]
    ])
    expect(callee.timeouts).toEqual([])
  }, 120_000)

  it("refuses voicemail settings it cannot use, naming each field", async () => {
    const account = await newAccount(phone.api)
    const refused = await phone.api.post("/api/v1/workflow/create/definition", {
      name: "Voicemail agent",
      workflow_definition: voiceDefinition(),
      workflow_configurations: { voicemail: { detection: "carrier", action: "leave_message", extra: 1 } }
    }, { token: account.token })
    expect(refused.status).toBe(422)
    expect(refused.body.detail.map((problem: any) => problem.loc.join("."))).toEqual([
      "body.workflow_configurations.voicemail.extra",
      "body.workflow_configurations.voicemail.detection",
      "body.workflow_configurations.voicemail"
    ])

    const unknownClip = await phone.api.post("/api/v1/workflow/create/definition", {
      name: "Voicemail agent",
      workflow_definition: voiceDefinition(),
      workflow_configurations: {
        voicemail: { detection: "in_call", action: "leave_message", message_recording_id: "rec_not_ours" }
      }
    }, { token: account.token })
    expect(unknownClip.status).toBe(422)
    expect(unknownClip.body.detail[0].loc.join(".")).toBe(
      "body.workflow_configurations.voicemail.message_recording_id"
    )
    expect(unknownClip.body.detail[0].msg).toContain(`"rec_not_ours" is not a recording of this organization`)
  })
})
