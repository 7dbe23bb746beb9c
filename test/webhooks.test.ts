import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { client } from "./support/client.ts"
import { carrierTelephony, contactsCsv, eventually, numbersFrom, startedCampaign } from "./support/dialerFixtures.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import type { CallScript } from "./support/loopbackCarrier.ts"
import { startRestartableServer } from "./support/restartableServer.ts"
import { ensureVoiceModels } from "./support/voiceFixtures.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

let server: Awaited<ReturnType<typeof startRestartableServer>>
let carrier: FakeTwilio
let receiver: WebhookReceiver
const scripts = new Map<string, CallScript>()
const api = () => client(server.url())

beforeAll(async () => {
  carrier = await startFakeTwilio({
    script: ({ to }) => scripts.get(to) ?? { outcome: "completed", ringMs: 10, talkMs: 100 }
  })
  receiver = await startWebhookReceiver({ failFirst: 2 })
  server = await startRestartableServer({
    TALKGRAPH_SCHEDULER_POLL_MS: "200",
    TALKGRAPH_MAX_CALL_SECONDS: "3",
    TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS: "1",
    TALKGRAPH_WEBHOOK_POLL_MS: "100",
    TALKGRAPH_WEBHOOK_RETRY_BASE_MS: "200"
  })
})
afterAll(async () => {
  await server?.close()
  await receiver?.close()
  await carrier?.close()
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

let sequence = 0
const freshNumber = () => `+1415777${String(++sequence).padStart(4, "0")}`

/** A single call through the loopback Twilio; answers its run id once the run has ended. */
const completedCall = async (account: TestAccount, key: string, workflowId: number) => {
  const created = await api().post("/api/v2/calls", { agent_id: workflowId, phone_number: freshNumber() }, {
    apiKey: key
  })
  expect(created.status).toBe(201)
  const runId = created.body.data.run_id as number
  await eventually(
    async () => {
      const [run] = await query<{ ended: boolean }>((sql) =>
        sql`SELECT ended_at IS NOT NULL AS ended FROM runs WHERE id = ${runId}`
      )
      return run?.ended
    },
    15_000,
    "call ended"
  )
  return runId
}

describe("outgoing webhooks", () => {
  it(
    "deliver every event at least once, signed, through failures and a server restart, and never twice to a receiver that accepted it",
    async () => {
      const account = await newAccount(api())
      await carrierTelephony(api(), { token: account.token }, carrier)
      await ensureVoiceModels(api(), { token: account.token })
      const workflowId = await insertWorkflow(server as never, account.organizationId)
      const key = await newApiKey(api(), account, ["calls:write"])

      const created = await api().post("/api/v1/webhooks", { url: receiver.url, description: "CRM" }, {
        token: account.token
      })
      expect(created.status).toBe(200)
      expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
      expect(created.body).toMatchObject({
        url: receiver.url,
        enabled: true,
        event_types: [
          "run.completed",
          "campaign.started",
          "campaign.paused",
          "campaign.completed",
          "call.voicemail",
          "call.transfer"
        ]
      })
      receiver.useSecret(created.body.secret)
      const endpointId = created.body.id as number
      // The secret is shown once.
      const read = await api().get(`/api/v1/webhooks/${endpointId}`, { token: account.token })
      expect(read.status).toBe(200)
      expect(read.body.secret).toBeUndefined()
      expect(JSON.stringify(read.body)).not.toContain(created.body.secret.slice(6))

      // A single call: its run's end is an event; the receiver refuses the first two tries.
      const callRun = await completedCall(account, key, workflowId)
      const callMessage = await eventually(
        async () =>
          receiver.accepted().find((message) =>
            message.body.type === "run.completed" && (message.body.data as { run_id: number }).run_id === callRun
          ),
        15_000,
        "run.completed delivered after retries"
      )
      expect(receiver.messages.filter((message) => message.id === callMessage.id).map((message) => message.status))
        .toEqual([503, 503, 204])
      expect(callMessage.body.data).toMatchObject({
        run_id: callRun,
        agent_id: workflowId,
        direction: "outbound",
        status: "completed",
        end_reason: "telephony_completed",
        transcript: [],
        extracted_variables: expect.any(Object),
        disposition: null,
        duration_seconds: expect.any(Number),
        usage: { prompt_tokens: 0, completion_tokens: 0, service_tokens: 0, tts_characters: 0, stt_seconds: 0 },
        artifacts: { recording_url: null, transcript_url: null },
        call_id: expect.any(Number)
      })

      // A campaign that starts, is paused, resumed and completes.
      const contacts = numbersFrom("+1415778", 2)
      for (const number of contacts) scripts.set(number, { outcome: "completed", ringMs: 300, talkMs: 200 })
      const campaignId = await startedCampaign(server as never, api(), account, contactsCsv(contacts))
      expect((await api().post(`/api/v1/campaign/${campaignId}/pause`, undefined, { token: account.token })).status)
        .toBe(200)
      expect((await api().post(`/api/v1/campaign/${campaignId}/resume`, undefined, { token: account.token })).status)
        .toBe(200)
      await eventually(
        async () => {
          const campaign = (await api().get(`/api/v1/campaign/${campaignId}`, { token: account.token })).body
          return campaign.state === "completed"
        },
        20_000,
        "campaign completed"
      )

      // The receiver goes down; a run ends; the server restarts; the receiver comes back.
      await receiver.down()
      const lateRun = await completedCall(account, key, workflowId)
      await eventually(
        async () => {
          const [failed] = await query<{ attempts: number }>((sql) =>
            sql`SELECT count(*)::int AS attempts FROM webhook_delivery_attempts a
            JOIN webhook_deliveries d ON d.id = a.delivery_id JOIN webhook_events e ON e.id = d.event_id
            WHERE e.run_id = ${lateRun} AND a.status IS NULL`
          )
          return failed!.attempts >= 1
        },
        10_000,
        "a delivery failed while the receiver was down"
      )
      await server.restart()
      await receiver.up()

      // Every event of the organization reaches the receiver, each accepted exactly once.
      const events = await query<{ id: number; type: string }>((sql) =>
        sql`SELECT id, type FROM webhook_events WHERE organization_id = ${account.organizationId} ORDER BY id`
      )
      await eventually(
        async () => {
          const accepted = new Set(receiver.accepted().map((message) => message.id))
          const all = await query<{ id: number }>((sql) =>
            sql`SELECT id FROM webhook_events WHERE organization_id = ${account.organizationId}`
          )
          return all.length >= events.length && all.every((event) => accepted.has(`msg_${event.id}`))
        },
        // The backoff may have grown while the receiver was down; its next try brings the rest.
        60_000,
        "every event delivered"
      )
      const finalEvents = await query<{ id: number; type: string; run_id: number | null }>((sql) =>
        sql`SELECT id, type, run_id FROM webhook_events WHERE organization_id = ${account.organizationId} ORDER BY id`
      )
      const runs = await query<{ id: number }>((sql) =>
        sql`SELECT id FROM runs WHERE organization_id = ${account.organizationId} AND ended_at IS NOT NULL`
      )
      expect(finalEvents.filter((event) => event.type === "run.completed").map((event) => event.run_id).sort())
        .toEqual(runs.map((run) => run.id).sort())
      expect(finalEvents.map((event) => event.type)).toEqual(
        expect.arrayContaining(["campaign.started", "campaign.paused", "campaign.completed"])
      )
      const acceptedIds = receiver.accepted().map((message) => message.id)
      expect(new Set(acceptedIds).size).toBe(acceptedIds.length)
      expect(receiver.badSignatures).toEqual([])
      const started = receiver.accepted().find((message) => message.body.type === "campaign.started")!
      expect(started.body.data).toMatchObject({ campaign_id: campaignId, agent_id: expect.any(Number) })

      // The delivery log tells each attempt's status and latency.
      const log = await api().get(`/api/v1/webhooks/${endpointId}/deliveries?limit=100`, { token: account.token })
      expect(log.status).toBe(200)
      expect(log.body.total_count).toBe(finalEvents.length)
      expect(log.body.deliveries.every((delivery: { state: string }) => delivery.state === "delivered")).toBe(true)
      const first = log.body.deliveries.find((delivery: { message_id: string }) =>
        delivery.message_id === callMessage.id
      )
      expect(first.attempt_log.map((attempt: { status: number | null }) => attempt.status)).toEqual([503, 503, 204])
      expect(first.attempt_log.every((attempt: { latency_ms: number }) => attempt.latency_ms >= 0)).toBe(true)
      const late = log.body.deliveries.find((delivery: { payload: { data: { run_id: number } } }) =>
        delivery.payload.data.run_id === lateRun
      )
      expect(late.attempt_log[0]).toMatchObject({ status: null, error: "no answer from the receiver" })
      expect(late.attempt_log.at(-1)).toMatchObject({ status: 204, error: null })

      // Redeliver sends the same message again; after a rotation it is signed with the new secret only.
      const rotated = await api().post(`/api/v1/webhooks/${endpointId}/rotate-secret`, undefined, {
        token: account.token
      })
      expect(rotated.status).toBe(200)
      expect(rotated.body.secret).not.toBe(created.body.secret)
      receiver.useSecret(rotated.body.secret)
      const again = await api().post(`/api/v1/webhooks/${endpointId}/deliveries/${first.id}/redeliver`, undefined, {
        token: account.token
      })
      expect(again.status).toBe(200)
      expect(again.body.state).toBe("pending")
      await eventually(
        async () => receiver.accepted().filter((message) => message.id === callMessage.id).length === 2,
        10_000,
        "redelivered"
      )
      // For a day after the rotation the previous secret signs too: a receiver not yet switched still verifies.
      receiver.useSecret(created.body.secret)
      await api().post(`/api/v1/webhooks/${endpointId}/deliveries/${first.id}/redeliver`, undefined, {
        token: account.token
      })
      await eventually(
        async () => receiver.accepted().filter((message) => message.id === callMessage.id).length === 3,
        10_000,
        "redelivered to a receiver holding the previous secret"
      )
      expect(receiver.badSignatures).toEqual([])
    },
    120_000
  )

  it("send call.transfer for a run whose call was transferred, with where to and how it went", async () => {
    const account = await newAccount(api())
    const workflowId = await insertWorkflow(server as never, account.organizationId)
    const created = await api().post("/api/v1/webhooks", { url: receiver.url, event_types: ["call.transfer"] }, {
      token: account.token
    })
    expect(created.status).toBe(200)
    receiver.useSecret(created.body.secret)
    const finished = async (gathered: Record<string, unknown>) => {
      const [run] = await query<{ id: number }>((sql) =>
        sql`INSERT INTO runs (organization_id, workflow_id, version_number, name, channel, mode, direction, state,
                              gathered_context, created_at, started_at)
            VALUES (${account.organizationId}, ${workflowId}, 1, 'transfer', 'telephony', 'twilio', 'outbound',
                    'running', ${JSON.stringify(gathered)}::jsonb, now(), now())
            RETURNING id`
      )
      await query((sql) =>
        sql`UPDATE runs SET state = 'completed', ended_at = now() WHERE id = ${run!.id} RETURNING id`
      )
      return Number(run!.id)
    }
    await finished({ budget: 5000 })
    const transferred = await finished({ transfer_outcome: "busy", transfer_destination: "+14155550199" })
    const message = await eventually(
      async () => receiver.accepted().find((candidate) => candidate.body.type === "call.transfer"),
      15_000,
      "call.transfer delivered"
    )
    expect(message.body.data).toMatchObject({
      run_id: transferred,
      transfer: { destination: "+14155550199", outcome: "busy" },
      extracted_variables: { transfer_outcome: "busy" }
    })
    await new Promise((resolve) => setTimeout(resolve, 500))
    const transfers = receiver.accepted().filter((candidate) => candidate.body.type === "call.transfer")
    expect(transfers.map((candidate) => (candidate.body.data as { run_id: number }).run_id)).toEqual([transferred])
  })

  it("belong to their organization and check their URL against the outbound policy", async () => {
    const owner = await newAccount(api())
    const other = await newAccount(api())
    const created = await api().post("/api/v1/webhooks", { url: receiver.url, event_types: ["campaign.completed"] }, {
      token: owner.token
    })
    expect(created.status).toBe(200)
    const id = created.body.id
    expect((await api().get(`/api/v1/webhooks/${id}`, { token: other.token })).status).toBe(404)
    expect((await api().patch(`/api/v1/webhooks/${id}`, { enabled: false }, { token: other.token })).status).toBe(404)
    expect((await api().delete(`/api/v1/webhooks/${id}`, { token: other.token })).status).toBe(404)
    expect((await api().post(`/api/v1/webhooks/${id}/rotate-secret`, undefined, { token: other.token })).status)
      .toBe(404)
    expect((await api().get(`/api/v1/webhooks/${id}/deliveries`, { token: other.token })).status).toBe(404)
    expect((await api().get("/api/v1/webhooks", { token: other.token })).body.endpoints).toEqual([])
    // A run of another organization is not delivered to this one's endpoint.
    const [before] = await query<{ deliveries: number }>((sql) =>
      sql`SELECT count(*)::int AS deliveries FROM webhook_deliveries WHERE endpoint_id = ${id}`
    )
    expect(before!.deliveries).toBe(0)

    const ftp = await api().post("/api/v1/webhooks", { url: "ftp://example.com/x" }, { token: owner.token })
    expect(ftp.status).toBe(422)
    expect(ftp.body.detail[0].loc).toEqual(["body", "url"])
    // The suite's policy allows loopback only: a private address is refused when it is saved.
    const internal = await api().post("/api/v1/webhooks", { url: "http://10.1.2.3/hook" }, { token: owner.token })
    expect(internal.status).toBe(422)
    expect(internal.body.detail[0].msg).toContain("10.1.2.3")
    const unknownEvent = await api().post("/api/v1/webhooks", { url: receiver.url, event_types: ["call.nope"] }, {
      token: owner.token
    })
    expect(unknownEvent.status).toBe(422)
    // A key without webhooks:write cannot manage endpoints.
    const key = await newApiKey(api(), owner, ["usage:read"])
    expect((await api().get("/api/v1/webhooks", { apiKey: key })).status).toBe(403)
    const disabled = await api().patch(`/api/v1/webhooks/${id}`, { enabled: false }, { token: owner.token })
    expect(disabled.body).toMatchObject({ enabled: false, disabled_reason: "Disabled by a user" })
  })
})
