import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import {
  type CarrierProviderName,
  carrierProviders,
  type CarrierStandIn,
  startCarrierStandIn
} from "./support/carrierStandIns.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony, contactsCsv, eventually, numbersFrom, startedCampaign } from "./support/dialerFixtures.ts"
import type { CallScript } from "./support/loopbackCarrier.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { ensureVoiceModels } from "./support/voiceFixtures.ts"
import { definitionUsing, insertWorkflow } from "./support/workflowRows.ts"

const ORG_LIMIT = 3

let server: RunningServer
let api: Client
const standIns = new Map<CarrierProviderName, CarrierStandIn>()
const scripts = new Map<string, CallScript>()
const e164 = (number: string) => (number.startsWith("+") ? number : `+${number}`)

beforeAll(async () => {
  for (const provider of carrierProviders) {
    standIns.set(
      provider,
      await startCarrierStandIn(provider, { script: ({ to }) => scripts.get(e164(to)) ?? { outcome: "completed" } })
    )
  }
  server = await startServer({
    TALKGRAPH_SCHEDULER_POLL_MS: "200",
    TALKGRAPH_MAX_CALL_SECONDS: "3",
    TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS: "1",
    TALKGRAPH_ORG_MAX_CONCURRENT_CALLS: String(ORG_LIMIT)
  }, { ownDatabase: true })
  api = client(server.url)
})
afterAll(async () => {
  await server?.close()
  for (const standIn of standIns.values()) await standIn.close()
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

interface Tenant {
  readonly account: TestAccount
  readonly key: string
  readonly workflowId: number
  readonly workflowUuid: string
  readonly line: { readonly id: number; readonly callerNumber: string }
}

/** An organization with an agent, voice models, a line at `standIn` and an API key that may place calls. */
const tenant = async (standIn: CarrierStandIn): Promise<Tenant> => {
  const account = await newAccount(api)
  const line = await carrierTelephony(api, { token: account.token }, standIn)
  await ensureVoiceModels(api, { token: account.token })
  const workflowId = await insertWorkflow(server, account.organizationId, { variables: ["first_name"] })
  const [workflow] = await query<{ workflow_uuid: string }>((sql) =>
    sql`SELECT workflow_uuid FROM workflows WHERE id = ${workflowId}`
  )
  const key = await newApiKey(api, account, ["calls:write", "calls:read", "usage:read"])
  return { account, key, workflowId, workflowUuid: workflow!.workflow_uuid, line }
}

let sequence = 0
const freshNumber = (index: number, script: CallScript = { outcome: "completed", ringMs: 10, talkMs: 100 }) => {
  const number = `+1415${300 + index}${String(++sequence).padStart(4, "0")}`
  scripts.set(number, script)
  return number
}

const callOf = async (id: number, key: string) => (await api.get(`/api/v2/calls/${id}`, { apiKey: key })).body.data

const ended = (id: number, key: string) =>
  eventually(
    async () => {
      const call = await callOf(id, key)
      return call.status === "completed" || call.status === "failed" ? call : undefined
    },
    15_000,
    `call ${id} ended`
  )

describe.each(carrierProviders.map((provider, index) => ({ provider, index })))(
  "a single call through $provider",
  ({ provider, index }) => {
    it("is placed through the carrier from the default line, completes, and its run is in usage; the Dograh route answers as Dograh does", async () => {
      const standIn = standIns.get(provider)!
      const org = await tenant(standIn)
      const to = freshNumber(index)
      const created = await api.post("/api/v2/calls", {
        agent_id: org.workflowId,
        phone_number: to,
        variables: { first_name: "Ada" }
      }, { apiKey: org.key })
      expect(created.status).toBe(201)
      expect(created.body.data).toMatchObject({
        agent_id: org.workflowId,
        phone_number: to,
        caller_number: org.line.callerNumber,
        telephony_configuration_id: org.line.id,
        variables: { first_name: "Ada" }
      })
      // The carrier was asked before the answer; its first callbacks may already have come.
      expect(["dialing", "in_progress", "completed"]).toContain(created.body.data.status)
      const call = await ended(created.body.data.id, org.key)
      expect(call).toMatchObject({ status: "completed", outcome: "completed", error: null })
      const placed = standIn.calls().filter((candidate) => e164(candidate.to) === to)
      expect(placed).toHaveLength(1)
      expect(e164(placed[0]!.from)).toBe(org.line.callerNumber)
      expect(standIn.callbackFailures()).toEqual([])

      const [run] = await query<
        {
          mode: string
          direction: string
          campaign_id: number | null
          state: string
          initial_context: Record<string, unknown>
        }
      >((sql) => sql`SELECT mode, direction, campaign_id, state, initial_context FROM runs WHERE id = ${call.run_id}`)
      expect(run).toMatchObject({
        mode: provider,
        direction: "outbound",
        campaign_id: null,
        state: "completed",
        initial_context: { first_name: "Ada", phone_number: to, called_number: to, triggered_by: "api" }
      })
      const usage = await api.get("/api/v1/organizations/usage/runs", { apiKey: org.key })
      expect(usage.status).toBe(200)
      expect(usage.body.runs.map((item: { id: number }) => item.id)).toContain(call.run_id)

      // Dograh's route: the same call path, Dograh's body and answer.
      const dograhTo = freshNumber(index)
      const dograh = await api.post(`/api/v1/public/agent/workflow/${org.workflowUuid}`, {
        phone_number: dograhTo,
        initial_context: { first_name: "Grace" }
      }, { apiKey: org.key })
      expect(dograh.status).toBe(200)
      expect(dograh.body).toEqual({
        status: "initiated",
        workflow_run_id: expect.any(Number),
        workflow_run_name: expect.any(String)
      })
      await eventually(
        async () => {
          const [row] = await query<{ state: string }>((sql) =>
            sql`SELECT state FROM runs WHERE id = ${dograh.body.workflow_run_id}`
          )
          return row?.state === "completed"
        },
        15_000,
        "Dograh call completed"
      )
      expect(standIn.calls().filter((candidate) => e164(candidate.to) === dograhTo)).toHaveLength(1)
    })
  }
)

describe("single calls", () => {
  it("answer every Dograh route shape: published and latest draft, by agent and by workflow UUID", async () => {
    const org = await tenant(standIns.get("twilio")!)
    const [published] = await query<{ id: number }>((sql) =>
      sql`SELECT id FROM workflow_definitions WHERE workflow_id = ${org.workflowId} AND version_status = 'published'`
    )
    const [draft] = await query<{ id: number }>((sql) =>
      sql`INSERT INTO workflow_definitions (workflow_id, version_number, version_status, workflow_definition)
          VALUES (${org.workflowId}, 2, 'draft', ${
        JSON.stringify(definitionUsing(["first_name"]))
      }::jsonb) RETURNING id`
    )
    const routes = [
      [`/api/v1/public/agent/${org.workflowUuid}`, published!.id],
      [`/api/v1/public/agent/test/${org.workflowUuid}`, draft!.id],
      [`/api/v1/public/agent/workflow/${org.workflowUuid}`, published!.id],
      [`/api/v1/public/agent/test/workflow/${org.workflowUuid}`, draft!.id]
    ] as const
    for (const [path, definitionId] of routes) {
      const to = freshNumber(0)
      const reply = await api.post(path, { phone_number: to }, { apiKey: org.key })
      expect(reply.status, path).toBe(200)
      expect(reply.body.status).toBe("initiated")
      const [run] = await query<{ definition_id: number; called_number: string }>((sql) =>
        sql`SELECT definition_id, called_number FROM runs WHERE id = ${reply.body.workflow_run_id}`
      )
      expect(run, path).toEqual({ definition_id: definitionId, called_number: to })
      // Four calls against a limit of three: each must end before the next, or a slow run sees 429.
      await eventually(
        async () => {
          const [row] = await query<{ state: string }>((sql) =>
            sql`SELECT state FROM runs WHERE id = ${reply.body.workflow_run_id}`
          )
          return row?.state === "completed"
        },
        15_000,
        `${path} call completed`
      )
    }
    // Bad input in v1's shape; an unknown agent is not found.
    const bad = await api.post(`/api/v1/public/agent/${org.workflowUuid}`, { initial_context: {} }, { apiKey: org.key })
    expect(bad.status).toBe(422)
    expect(bad.body.detail[0]).toMatchObject({ loc: ["body", "phone_number"] })
    const undialable = await api.post(`/api/v1/public/agent/${org.workflowUuid}`, { phone_number: "12" }, {
      apiKey: org.key
    })
    expect(undialable.status).toBe(422)
    expect(undialable.body.detail[0]).toMatchObject({ loc: ["body", "phone_number"] })
    const unknown = await api.post(`/api/v1/public/agent/${crypto.randomUUID()}`, { phone_number: freshNumber(0) }, {
      apiKey: org.key
    })
    expect(unknown.status).toBe(404)
  })

  it("end as failed, freeing their slot, when the carrier refuses them; Dograh's route then answers 502", async () => {
    const twilio = standIns.get("twilio")! as CarrierStandIn & { rejectNextCalls: (count: number) => void }
    const org = await tenant(twilio)
    twilio.rejectNextCalls(2)
    const refused = await api.post("/api/v2/calls", { agent_id: org.workflowId, phone_number: freshNumber(0) }, {
      apiKey: org.key
    })
    expect(refused.status).toBe(201)
    expect(refused.body.data).toMatchObject({
      status: "failed",
      end_reason: "not_placed",
      error: "The carrier did not place the call"
    })
    const dograh = await api.post(`/api/v1/public/agent/${org.workflowUuid}`, { phone_number: freshNumber(0) }, {
      apiKey: org.key
    })
    expect(dograh.status).toBe(502)
    expect(dograh.body.detail).toContain("Failed to initiate call")
    const [live] = await query<{ live: number }>((sql) =>
      sql`SELECT count(*)::int AS live FROM campaign_attempts
          WHERE organization_id = ${org.account.organizationId} AND ended_at IS NULL`
    )
    expect(live!.live).toBe(0)
  })

  it("make one call per idempotency key: the same request answers the same call, a different one is refused", async () => {
    const org = await tenant(standIns.get("twilio")!)
    const to = freshNumber(0)
    const body = { agent_id: org.workflowId, phone_number: to, variables: { a: 1, b: 2 } }
    const first = await api.post("/api/v2/calls", body, { apiKey: org.key, headers: { "idempotency-key": "order-17" } })
    expect(first.status).toBe(201)
    // The same key in the body, the variables in another order: the same request.
    const again = await api.post("/api/v2/calls", {
      ...body,
      variables: { b: 2, a: 1 },
      idempotency_key: "order-17"
    }, { apiKey: org.key })
    expect(again.status).toBe(201)
    expect(again.body.data.id).toBe(first.body.data.id)
    expect(again.body.data.run_id).toBe(first.body.data.run_id)
    const different = await api.post("/api/v2/calls", { ...body, phone_number: freshNumber(0) }, {
      apiKey: org.key,
      headers: { "idempotency-key": "order-17" }
    })
    expect(different.status).toBe(409)
    expect(different.body.error).toMatchObject({ code: "conflict" })
    const mismatched = await api.post("/api/v2/calls", { ...body, idempotency_key: "a" }, {
      apiKey: org.key,
      headers: { "idempotency-key": "b" }
    })
    expect(mismatched.status).toBe(422)
    expect(mismatched.body.error).toMatchObject({ code: "validation_error" })
    await ended(first.body.data.id, org.key)
    expect(standIns.get("twilio")!.calls().filter((call) => e164(call.to) === to)).toHaveLength(1)
    const [count] = await query<{ calls: number }>((sql) =>
      sql`SELECT count(*)::int AS calls FROM calls WHERE organization_id = ${org.account.organizationId}`
    )
    expect(count!.calls).toBe(1)
  })

  it("place a scheduled call once it is due", async () => {
    const org = await tenant(standIns.get("telnyx")!)
    const to = freshNumber(2)
    const at = new Date(Date.now() + 1500)
    const created = await api.post("/api/v2/calls", {
      agent_id: org.workflowId,
      phone_number: to,
      scheduled_at: at.toISOString()
    }, { apiKey: org.key })
    expect(created.status).toBe(201)
    expect(created.body.data).toMatchObject({ status: "scheduled", run_id: null, scheduled_at: at.toISOString() })
    expect(standIns.get("telnyx")!.calls().filter((call) => e164(call.to) === to)).toHaveLength(0)
    const call = await ended(created.body.data.id, org.key)
    expect(call.status).toBe("completed")
    const placed = standIns.get("telnyx")!.calls().find((candidate) => e164(candidate.to) === to)!
    expect(placed.createdAt).toBeGreaterThanOrEqual(at.getTime())
  })

  it("share the organization's live-call limit with a running campaign, both ways", async () => {
    const standIn = standIns.get("vonage")!
    const org = await tenant(standIn)
    // Single calls take every slot first: the campaign waits until they end.
    const long: CallScript = { outcome: "completed", ringMs: 10, talkMs: 4000 }
    const singles: Array<number> = []
    for (let i = 0; i < ORG_LIMIT; i++) {
      const reply = await api.post("/api/v2/calls", { agent_id: org.workflowId, phone_number: freshNumber(1, long) }, {
        apiKey: org.key
      })
      expect(reply.status).toBe(201)
      singles.push(reply.body.data.id as number)
    }
    const refused = await api.post("/api/v2/calls", { agent_id: org.workflowId, phone_number: freshNumber(1) }, {
      apiKey: org.key
    })
    expect(refused.status).toBe(429)
    expect(refused.headers.get("retry-after")).toBe("5")
    expect(refused.body.error).toMatchObject({ code: "rate_limited" })

    const contacts = numbersFrom(`+1415410`, 4)
    for (const number of contacts) scripts.set(number, { outcome: "completed", ringMs: 10, talkMs: 1500 })
    const campaignId = await startedCampaign(server, api, org.account, contactsCsv(contacts), {
      rate_limit_per_second: 10
    })
    for (const id of singles) await ended(id, org.key)
    // The campaign, started while the single calls held every slot, placed nothing until the first
    // of them ended (a check of timestamps, not of how fast this machine is). The attempt's own
    // created_at is the dialer's clock read before its claim looked at the slots, so it can precede
    // an end committed meanwhile; the carrier's record of the request comes after the claim's commit.
    const firstCampaignCall = await eventually(
      async () => {
        const placed = standIn.calls().filter((call) => contacts.includes(e164(call.to)))
        return placed.length > 0 ? Math.min(...placed.map((call) => call.createdAt)) : undefined
      },
      20_000,
      "the campaign's first call"
    )
    const [order] = await query<{ first_single_ended: number; campaign_started: number }>((sql) =>
      sql`SELECT
        (SELECT extract(epoch FROM created_at) * 1000 FROM campaigns WHERE id = ${campaignId})::float8
          AS campaign_started,
        (SELECT extract(epoch FROM min(a.ended_at)) * 1000 FROM calls c JOIN campaign_attempts a ON a.id = c.attempt_id
          WHERE c.id IN ${sql.in(singles)})::float8 AS first_single_ended`
    )
    expect(order!.campaign_started).toBeLessThan(order!.first_single_ended)
    expect(firstCampaignCall).toBeGreaterThanOrEqual(order!.first_single_ended)

    // Now the campaign holds the slots: a single call is refused while they are all live.
    await eventually(
      async () => {
        const [live] = await query<{ live: number }>((sql) =>
          sql`SELECT count(*)::int AS live FROM campaign_attempts WHERE campaign_id = ${campaignId} AND ended_at IS NULL`
        )
        return live!.live === ORG_LIMIT
      },
      10_000,
      "campaign fills the organization's slots"
    )
    const whileCampaign = await api.post("/api/v2/calls", { agent_id: org.workflowId, phone_number: freshNumber(1) }, {
      apiKey: org.key
    })
    expect(whileCampaign.status).toBe(429)
    await eventually(
      async () => {
        const campaign = (await api.get(`/api/v1/campaign/${campaignId}`, { token: org.account.token })).body
        return campaign.state === "completed"
      },
      20_000,
      "campaign completed"
    )
    expect(standIn.maxLiveCalls()).toBeLessThanOrEqual(ORG_LIMIT)
  })

  it("belong to their organization: another cannot read them, nor call with its agents", async () => {
    const owner = await tenant(standIns.get("plivo")!)
    const other = await tenant(standIns.get("plivo")!)
    const created = await api.post("/api/v2/calls", { agent_id: owner.workflowId, phone_number: freshNumber(3) }, {
      apiKey: owner.key
    })
    expect(created.status).toBe(201)
    expect((await api.get(`/api/v2/calls/${created.body.data.id}`, { apiKey: other.key })).status).toBe(404)
    const borrowed = await api.post("/api/v2/calls", { agent_id: owner.workflowId, phone_number: freshNumber(3) }, {
      apiKey: other.key
    })
    expect(borrowed.status).toBe(404)
    const dograh = await api.post(`/api/v1/public/agent/workflow/${owner.workflowUuid}`, {
      phone_number: freshNumber(3)
    }, { apiKey: other.key })
    expect(dograh.status).toBe(404)
    const otherLine = await api.post("/api/v2/calls", {
      agent_id: other.workflowId,
      phone_number: freshNumber(3),
      telephony_configuration_id: owner.line.id
    }, { apiKey: other.key })
    expect(otherLine.status).toBe(422)
    // A key without calls:write cannot place calls.
    const reader = await newApiKey(api, owner.account, ["calls:read"])
    expect(
      (await api.post("/api/v2/calls", { agent_id: owner.workflowId, phone_number: freshNumber(3) }, {
        apiKey: reader
      })).status
    ).toBe(403)
    await ended(created.body.data.id, owner.key)
  })
})
