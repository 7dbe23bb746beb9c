import { describe, expect, it } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { sine, wavFile } from "./support/audioClips.ts"
import type { CalleeScript } from "./support/calleeScript.ts"
import { carrierNumber } from "./support/carrierStandIns.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { eventually } from "./support/dialerFixtures.ts"
import { phoneCallsForTests } from "./support/phoneCalls.ts"
import { reply } from "./support/scriptedLlm.ts"
import { uploadCsv } from "./support/uploads.ts"
import { voiceDefinition } from "./support/voiceFixtures.ts"

// A campaign's own voicemail policy, over an agent that has none: its calls, placed through the
// Twilio stand-in, reach a voicemail greeting (eSpeak NG) ending in a beep.

const GREETING_LINES = [
  "Hi, you have reached Dana.",
  "I can't come to the phone right now.",
  "Please leave a message after the tone."
]
const machineScript: CalleeScript = [
  ...GREETING_LINES.map((say) => ({ say })),
  { tone: { hz: 1000, ms: 400 } },
  { silence: 25_000 },
  { hangUp: true }
]

const phone = phoneCallsForTests(() => reply.content("Okay."))

/** Creates the campaign of one contact, `to`, with the agent; answers the reply as it came. */
const createCampaign = async (account: TestAccount, workflowId: number, to: string, settings: object) => {
  const sourceId = await uploadCsv(phone.api, { token: account.token }, `phone_number,first_name\n${to},Dana\n`)
  return phone.api.post("/api/v1/campaign/create", {
    name: "Voicemail campaign",
    workflow_id: workflowId,
    source_type: "csv",
    source_id: sourceId,
    ...settings
  }, { token: account.token })
}

/** An account with an agent whose configurations say nothing about voicemail. */
const plainAgent = async (equipped = false) => {
  const account = await newAccount(phone.api)
  if (equipped) await phone.equip(account)
  const workflowId = await createWorkflow(phone.api, phone.server, account, voiceDefinition())
  return { account, workflowId }
}

/** Registers a short clip of the organization's under `recordingId`, as greetings' clips are. */
const registerClip = async (account: TestAccount, recordingId: string) => {
  const clip = wavFile(sine(300, 16000, 1, 0.3), 16000)
  const grant = await phone.api.post("/api/v1/workflow-recordings/upload-url", {
    files: [{ filename: "message.wav", mime_type: "audio/wav", file_size: clip.length }]
  }, { token: account.token })
  expect(grant.status).toBe(200)
  const item = grant.body.items[0]
  const put = await fetch(item.upload_url, { method: "PUT", headers: { "content-type": "audio/wav" }, body: clip })
  expect(put.status).toBeLessThan(300)
  const registered = await phone.api.post("/api/v1/workflow-recordings/", {
    recordings: [{ recording_id: recordingId, storage_key: item.storage_key }]
  }, { token: account.token })
  expect(registered.status).toBe(200)
}

describe("a campaign's own voicemail policy", () => {
  it("hangs up on a voicemail greeting though its agent has no voicemail setting", async () => {
    const { account, workflowId } = await plainAgent(true)
    const to = "+14155550821"
    phone.carrier.calleeScript(carrierNumber("twilio", to), machineScript)
    const created = await createCampaign(account, workflowId, to, {
      voicemail: { detection: "in_call", action: "hang_up" }
    })
    expect(created.status).toBe(200)
    expect(created.body.voicemail).toEqual({ detection: "in_call", action: "hang_up" })
    const campaignId = created.body.id as number
    const read = await phone.api.get(`/api/v1/campaign/${campaignId}`, { token: account.token })
    expect(read.body.voicemail).toEqual({ detection: "in_call", action: "hang_up" })
    const started = await phone.api.post(`/api/v1/campaign/${campaignId}/start`, undefined, { token: account.token })
    expect(started.status).toBe(200)

    const [placed] = await eventually(
      async () => {
        const rows = await phone.query<{ id: number }>((sql) =>
          sql`SELECT id FROM runs WHERE campaign_id = ${campaignId}`
        )
        return rows.length > 0 ? rows : undefined
      },
      15_000,
      "call placed"
    )
    phone.deepgram.script(`talkgraph-run-${placed!.id}`, [GREETING_LINES])
    const run = await eventually(
      async () => {
        const [row] = await phone.query<Record<string, any>>((sql) =>
          sql`SELECT ended_at, busy_token, end_reason, disposition, transcript FROM runs WHERE id = ${placed!.id}`
        )
        return row?.ended_at && row.busy_token === null ? row : undefined
      },
      60_000,
      "call ended"
    )
    expect(run).toMatchObject({ end_reason: "voicemail", disposition: "voicemail", transcript: [] })
    const call = phone.carrier.calls().find((candidate) => candidate.to === carrierNumber("twilio", to))!
    const callee = (await call.calleeDone)!
    // Ended by the agent during the greeting: nothing said to the machine.
    expect(callee.endedBy).not.toBe("callee")
    expect(callee.agentBursts).toEqual([])
    // The campaign counts the contact's call as voicemail.
    const contact = await eventually(
      async () => {
        const [row] = await phone.query<{ state: string; last_outcome: string | null }>((sql) =>
          sql`SELECT state, last_outcome FROM campaign_contacts WHERE campaign_id = ${campaignId}`
        )
        return row?.last_outcome ? row : undefined
      },
      30_000,
      "contact outcome"
    )
    expect(contact.last_outcome).toBe("voicemail")

    // Redialling the machines keeps the policy.
    await eventually(
      async () =>
        (await phone.api.get(`/api/v1/campaign/${campaignId}`, { token: account.token })).body.state === "completed",
      30_000,
      "campaign completed"
    )
    const child = await phone.api.post(`/api/v1/campaign/${campaignId}/redial`, { retry_on_voicemail: true }, {
      token: account.token
    })
    expect(child.status).toBe(200)
    expect(child.body.voicemail).toEqual({ detection: "in_call", action: "hang_up" })
  }, 120_000)

  it("refuses a voicemail setting the agent's rules refuse, naming each field", async () => {
    const { account, workflowId } = await plainAgent()
    const refused = await createCampaign(account, workflowId, "+14155550822", {
      voicemail: { detection: "carrier", action: "leave_message", extra: 1 }
    })
    expect(refused.status).toBe(422)
    expect(refused.body.detail.map((problem: any) => problem.loc.join("."))).toEqual([
      "body.voicemail.extra",
      "body.voicemail.detection",
      "body.voicemail"
    ])
    const notAnObject = await createCampaign(account, workflowId, "+14155550822", { voicemail: "hang_up" })
    expect(notAnObject.status).toBe(422)
    expect(notAnObject.body.detail[0].loc).toEqual(["body", "voicemail"])

    // Null follows the agent; a change is checked as a new setting is, and logged.
    const created = await createCampaign(account, workflowId, "+14155550822", { voicemail: null })
    expect(created.status).toBe(200)
    expect(created.body.voicemail).toBeNull()
    const badChange = await phone.api.patch(`/api/v1/campaign/${created.body.id}`, {
      voicemail: { detection: "in_call", action: "leave_message", message_text: "" }
    }, { token: account.token })
    expect(badChange.status).toBe(422)
    expect(badChange.body.detail.map((problem: any) => problem.loc.join("."))).toEqual([
      "body.voicemail.message_text",
      "body.voicemail"
    ])
    const changed = await phone.api.patch(`/api/v1/campaign/${created.body.id}`, {
      voicemail: { detection: "in_call", action: "leave_message", message_text: "Hi {{first_name}}, call us back." }
    }, { token: account.token })
    expect(changed.status).toBe(200)
    expect(changed.body.voicemail).toEqual({
      detection: "in_call",
      action: "leave_message",
      message_text: "Hi {{first_name}}, call us back."
    })
    expect(changed.body.logs.at(-1).message).toContain("voicemail")
    // Other settings leave it as it is; null returns the calls to the agent's policy.
    const renamed = await phone.api.patch(`/api/v1/campaign/${created.body.id}`, { name: "Renamed" }, {
      token: account.token
    })
    expect(renamed.body.voicemail).toMatchObject({ action: "leave_message" })
    const cleared = await phone.api.patch(`/api/v1/campaign/${created.body.id}`, { voicemail: null }, {
      token: account.token
    })
    expect(cleared.status).toBe(200)
    expect(cleared.body.voicemail).toBeNull()
  })

  it("leaves only a recording of the organization's own", async () => {
    const owner = await plainAgent()
    await registerClip(owner.account, "campaign-voicemail")
    const { account, workflowId } = await plainAgent()
    const setting = { detection: "in_call", action: "leave_message", message_recording_id: "campaign-voicemail" }

    const refused = await createCampaign(account, workflowId, "+14155550823", { voicemail: setting })
    expect(refused.status).toBe(422)
    expect(refused.body.detail[0].loc.join(".")).toBe("body.voicemail.message_recording_id")
    expect(refused.body.detail[0].msg).toContain(`"campaign-voicemail" is not a recording of this organization`)
    const created = await createCampaign(account, workflowId, "+14155550823", {})
    const changed = await phone.api.patch(`/api/v1/campaign/${created.body.id}`, { voicemail: setting }, {
      token: account.token
    })
    expect(changed.status).toBe(422)
    expect(changed.body.detail[0].loc.join(".")).toBe("body.voicemail.message_recording_id")

    const allowed = await createCampaign(owner.account, owner.workflowId, "+14155550823", { voicemail: setting })
    expect(allowed.status).toBe(200)
    expect(allowed.body.voicemail).toEqual(setting)
  })
})
