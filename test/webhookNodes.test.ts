import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { carrierTelephony, eventually } from "./support/dialerFixtures.ts"
import { type FakeTwilio, startFakeTwilio } from "./support/fakeTwilio.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { ensureVoiceModels } from "./support/voiceFixtures.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.ts"

let server: RunningServer
let api: Client
let receiver: WebhookReceiver
let carrier: FakeTwilio

beforeAll(async () => {
  carrier = await startFakeTwilio({ script: () => ({ outcome: "completed", ringMs: 10, talkMs: 100 }) })
  receiver = await startWebhookReceiver({ unsigned: true })
  server = await startServer({
    TALKGRAPH_SCHEDULER_POLL_MS: "200",
    TALKGRAPH_MAX_CALL_SECONDS: "3",
    TALKGRAPH_CALL_DEADLINE_GRACE_SECONDS: "1",
    TALKGRAPH_WEBHOOK_POLL_MS: "100",
    TALKGRAPH_WEBHOOK_RETRY_BASE_MS: "200"
  })
  api = client(server.url)
})
afterAll(async () => {
  await server?.close()
  await receiver?.close()
  await carrier?.close()
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

const conversation = [
  { id: "1", type: "startCall", position: { x: 0, y: 0 }, data: { name: "Start", prompt: "Greet.", greeting: "Hi" } },
  { id: "2", type: "endCall", position: { x: 0, y: 200 }, data: { name: "End", prompt: "Say goodbye." } }
]
const edges = [{ id: "e1", source: "1", target: "2", data: { label: "Done", condition: "The caller is done" } }]

const webhookNode = (id: string, data: Record<string, unknown>) => ({
  id,
  type: "webhook",
  position: { x: 300, y: 0 },
  data: { name: `Webhook ${id}`, enabled: true, ...data }
})

const triggerNode = (path: string) => ({
  id: "t",
  type: "trigger",
  position: { x: 300, y: 200 },
  data: { name: "API Trigger", enabled: true, trigger_path: path }
})

const createAgent = async (account: TestAccount, sideNodes: ReadonlyArray<unknown>) => {
  const created = await api.post("/api/v1/workflow/create/definition", {
    name: "Dograh agent",
    workflow_definition: { nodes: [...conversation, ...sideNodes], edges }
  }, { token: account.token })
  return created
}

const bearer = async (account: TestAccount) => {
  const created = await api.post("/api/v1/credentials", {
    name: `CRM ${Math.random()}`,
    credential_type: "bearer_token",
    credential_data: { token: "crm-secret-token" }
  }, { token: account.token })
  expect(created.status).toBe(200)
  return created.body.uuid as string
}

/** A run of `definitionId` stored and then finished, as a call's end does: the finish fires the webhooks. */
const finishedRun = async (account: TestAccount, workflowId: number, definitionId: number, mode = "twilio") => {
  const [run] = await query<{ id: number }>((sql) =>
    sql`INSERT INTO runs (organization_id, workflow_id, definition_id, version_number, name, channel, mode, direction,
                          state, initial_context, gathered_context, transcript, duration_seconds, disposition, created_at,
                          started_at)
        VALUES (${account.organizationId}, ${workflowId}, ${definitionId}, 1, 'run-ada', 'telephony', ${mode},
                'outbound', 'running', ${JSON.stringify({ first_name: "Ada", phone_number: "+14155550100" })}::jsonb,
                ${JSON.stringify({ rsvp: "yes", party: { size: 3 } })}::jsonb,
                ${JSON.stringify([{ role: "assistant", content: "Hi" }])}::jsonb, 42, 'interested', now(), now())
        RETURNING id`
  )
  await query((sql) => sql`UPDATE runs SET state = 'completed', ended_at = now() WHERE id = ${run!.id} RETURNING id`)
  return Number(run!.id)
}

const versionId = async (workflowId: number, status: "published" | "draft") => {
  const [row] = await query<{ id: number }>((sql) =>
    sql`SELECT id FROM workflow_definitions WHERE workflow_id = ${workflowId} AND version_status = ${status}`
  )
  return Number(row!.id)
}

describe("Dograh webhook nodes", () => {
  it("are not sent for agent tests' rehearsals, text or voice", async () => {
    const account = await newAccount(api, "webhook-node-tests")
    const created = await createAgent(account, [
      webhookNode("crm", {
        endpoint_url: `${receiver.url}/rehearsal`,
        payload_template: { run: "{{workflow_run_id}}" }
      })
    ])
    expect(created.status).toBe(200)
    const workflowId = created.body.id as number
    const definitionId = await versionId(workflowId, "published")
    await finishedRun(account, workflowId, definitionId, "testchat")
    await finishedRun(account, workflowId, definitionId, "testcall")
    const real = await finishedRun(account, workflowId, definitionId)
    await eventually(
      async () => receiver.accepted().find((message) => message.body?.run === String(real)),
      15_000,
      "the real run's webhook node delivered"
    )
    await new Promise((resolve) => setTimeout(resolve, 500))
    const sent = receiver.messages.filter((message) => message.path === "/hooks/talkgraph/rehearsal")
    expect(sent.map((message) => message.body.run)).toEqual([String(real)])
  })

  it("send each enabled node's rendered payload once a run finishes, with its method, headers and credential, retried until accepted", async () => {
    const account = await newAccount(api, "webhook-node")
    const credential = await bearer(account)
    const created = await createAgent(account, [
      webhookNode("crm", {
        http_method: "PUT",
        endpoint_url: `${receiver.url}/crm`,
        credential_uuid: credential,
        custom_headers: [{ key: "X-Source", value: "talkgraph" }],
        payload_template: {
          run: "{{workflow_run_id}}",
          "{{workflow_run_name}}": "key rendered",
          who: "Hello {{ initial_context.first_name }}",
          rsvp: "{{gathered_context.rsvp}}",
          party: "{{gathered_context.party}}",
          missing: "{{gathered_context.nope | unknown}}",
          empty: "{{gathered_context.nope}}",
          duration: "{{cost_info.call_duration_seconds}}",
          kept: 5,
          list: ["{{workflow_id}}", true, null]
        }
      }),
      webhookNode("off", { enabled: false, endpoint_url: `${receiver.url}/disabled` })
    ])
    expect(created.status).toBe(200)
    const workflowId = created.body.id as number
    const definitionId = await versionId(workflowId, "published")

    receiver.failNext(2)
    const runId = await finishedRun(account, workflowId, definitionId)
    const accepted = await eventually(
      async () => receiver.accepted().find((message) => message.path === "/hooks/talkgraph/crm"),
      15_000,
      "the webhook node's message accepted after retries"
    )
    const attempts = receiver.messages.filter((message) => message.path === "/hooks/talkgraph/crm")
    expect(attempts.map((message) => message.status)).toEqual([503, 503, 204])
    expect(new Set(attempts.map((message) => message.headers["x-dograh-delivery-id"])).size).toBe(1)
    expect(attempts.map((message) => message.headers["x-dograh-delivery-attempt"])).toEqual(["1", "2", "3"])
    expect(accepted.method).toBe("PUT")
    expect(accepted.headers).toMatchObject({
      authorization: "Bearer crm-secret-token",
      "x-source": "talkgraph",
      "content-type": "application/json",
      "x-dograh-workflow-run-id": String(runId)
    })
    expect(accepted.body).toEqual({
      run: String(runId),
      "run-ada": "key rendered",
      who: "Hello Ada",
      rsvp: "yes",
      party: JSON.stringify({ size: 3 }),
      missing: "unknown",
      empty: "",
      duration: "42",
      kept: 5,
      list: [String(workflowId), true, null],
      call_disposition: "interested"
    })
    // A disabled node sends nothing.
    expect(receiver.messages.filter((message) => message.path.includes("disabled"))).toEqual([])

    // The delivery log: the node's request, the body sent, each attempt. The receiver has the message
    // before the sender has its answer and records the attempt, so the log is read once it has.
    const log = await eventually(
      async () => {
        const reply = await api.get(`/api/v1/workflow/${workflowId}/webhook-deliveries`, { token: account.token })
        return reply.status !== 200 || reply.body.deliveries?.[0]?.state !== "pending" ? reply : undefined
      },
      10_000,
      "the delivery's last attempt recorded"
    )
    expect(log.status).toBe(200)
    expect(log.body.total_count).toBe(1)
    expect(log.body.deliveries[0]).toMatchObject({
      workflow_run_id: runId,
      node_id: "crm",
      node_name: "Webhook crm",
      endpoint_url: `${receiver.url}/crm`,
      http_method: "PUT",
      state: "delivered",
      attempts: 3,
      last_status: 204,
      payload: accepted.body,
      delivery_id: accepted.headers["x-dograh-delivery-id"]
    })
    expect(log.body.deliveries[0].attempt_log.map((attempt: { status: number }) => attempt.status)).toEqual([
      503,
      503,
      204
    ])
    expect(JSON.stringify(log.body)).not.toContain("crm-secret-token")
    // Another organization does not see the agent's log.
    const stranger = await newAccount(api, "webhook-stranger")
    expect((await api.get(`/api/v1/workflow/${workflowId}/webhook-deliveries`, { token: stranger.token })).status)
      .toBe(404)

    // Redelivery sends the same body again.
    const again = await api.post(
      `/api/v1/workflow/${workflowId}/webhook-deliveries/${log.body.deliveries[0].id}/redeliver`,
      undefined,
      { token: account.token }
    )
    expect(again.status).toBe(200)
    await eventually(
      async () => receiver.accepted().filter((message) => message.path === "/hooks/talkgraph/crm").length === 2,
      10_000,
      "redelivered"
    )
    expect(receiver.accepted().filter((message) => message.path === "/hooks/talkgraph/crm")[1]!.body).toEqual(
      accepted.body
    )

    // The credential is now bound to the receiver's host: a node moved to another host does not get it.
    const bound = await api.get(`/api/v1/credentials/${credential}`, { token: account.token })
    expect(bound.body.bound_host).toBe(new URL(receiver.url).host)
    const moved = await api.put(`/api/v1/workflow/${workflowId}`, {
      workflow_definition: {
        nodes: [
          ...conversation,
          webhookNode("crm", {
            endpoint_url: `http://localhost:${new URL(receiver.url).port}/hooks/talkgraph/moved`,
            credential_uuid: credential
          })
        ],
        edges
      }
    }, { token: account.token })
    expect(moved.status).toBe(200)
    const movedRun = await finishedRun(account, workflowId, await versionId(workflowId, "draft"))
    const refused = await eventually(
      async () => {
        const page = await api.get(`/api/v1/workflow/${workflowId}/webhook-deliveries`, { token: account.token })
        const delivery = page.body.deliveries.find((d: { workflow_run_id: number }) => d.workflow_run_id === movedRun)
        return delivery?.attempt_log.length > 0 ? delivery : undefined
      },
      10_000,
      "the moved node's attempt"
    )
    expect(refused.last_error).toContain("bound to another host")
    expect(refused.state).toBe("pending")
    expect(receiver.messages.filter((message) => message.path.includes("moved"))).toEqual([])
  })
})

describe("Dograh webhook nodes' reach", () => {
  it("is the outbound policy's: a node at a private address is refused, not sent, and says so in its log", async () => {
    const account = await newAccount(api, "webhook-private")
    const created = await createAgent(account, [webhookNode("lan", { endpoint_url: "http://10.20.30.40/hook" })])
    expect(created.status).toBe(200)
    const workflowId = created.body.id as number
    const runId = await finishedRun(account, workflowId, await versionId(workflowId, "published"))
    const delivery = await eventually(
      async () => {
        const page = await api.get(`/api/v1/workflow/${workflowId}/webhook-deliveries`, { token: account.token })
        const found = page.body.deliveries.find((d: { workflow_run_id: number }) => d.workflow_run_id === runId)
        return found?.attempt_log.length > 0 ? found : undefined
      },
      10_000,
      "the private node's attempt"
    )
    expect(delivery.attempt_log[0]).toMatchObject({ status: null, error: "refused by the outbound policy" })
  })
})

describe("Dograh trigger nodes", () => {
  it("place a call for the agent holding the path, with the key's organization only; a path is one agent's", async () => {
    const account = await newAccount(api, "trigger-node")
    await carrierTelephony(api, { token: account.token }, carrier)
    await ensureVoiceModels(api, { token: account.token })
    const path = `crm-${crypto.randomUUID().slice(0, 8)}`
    const created = await createAgent(account, [
      triggerNode(path),
      webhookNode("done", {
        endpoint_url: `${receiver.url}/trigger-done`,
        payload_template: { run: "{{workflow_run_id}}" }
      })
    ])
    expect(created.status).toBe(200)
    const workflowId = created.body.id as number
    const key = await newApiKey(api, account, ["calls:write"])

    const placed = await api.post(`/api/v1/public/agent/${path}`, {
      phone_number: "+14155550142",
      initial_context: { first_name: "Ada" }
    }, { apiKey: key })
    expect(placed.status).toBe(200)
    expect(placed.body).toMatchObject({ status: "initiated", workflow_run_id: expect.any(Number) })
    const [run] = await query<{ workflow_id: number; called_number: string }>((sql) =>
      sql`SELECT workflow_id, called_number FROM runs WHERE id = ${placed.body.workflow_run_id}`
    )
    expect(run).toEqual({ workflow_id: workflowId, called_number: "+14155550142" })
    // The call's end sends the agent's webhook node.
    const done = await eventually(
      async () => receiver.accepted().find((message) => message.path === "/hooks/talkgraph/trigger-done"),
      20_000,
      "the triggered call's webhook node"
    )
    expect(done.body).toMatchObject({ run: String(placed.body.workflow_run_id) })

    // An unknown path, and the path with another organization's key: not found, in v1's shape.
    const unknown = await api.post(`/api/v1/public/agent/no-such-path`, { phone_number: "+14155550143" }, {
      apiKey: key
    })
    expect(unknown.status).toBe(404)
    expect(unknown.body.detail).toEqual(expect.any(String))
    const other = await newAccount(api, "trigger-other")
    const otherKey = await newApiKey(api, other, ["calls:write"])
    const foreign = await api.post(`/api/v1/public/agent/${path}`, { phone_number: "+14155550144" }, {
      apiKey: otherKey
    })
    expect(foreign.status).toBe(404)

    // Another agent of the organization cannot take the path; another organization may use it.
    const clash = await createAgent(account, [triggerNode(path)])
    expect(clash.status).toBe(422)
    expect(clash.body.detail[0]).toMatchObject({
      loc: ["body", "workflow_definition", "nodes", 2, "data", "trigger_path"],
      type: "trigger_path_taken"
    })
    const second = await createAgent(account, [])
    expect(second.status).toBe(200)
    const taken = await api.put(`/api/v1/workflow/${second.body.id}`, {
      workflow_definition: { nodes: [...conversation, triggerNode(path)], edges }
    }, { token: account.token })
    expect(taken.status).toBe(422)
    expect((await createAgent(other, [triggerNode(path)])).status).toBe(200)
    // The agent itself may save its own path again.
    const resaved = await api.put(`/api/v1/workflow/${workflowId}`, {
      workflow_definition: { nodes: [...conversation, triggerNode(path)], edges }
    }, { token: account.token })
    expect(resaved.status).toBe(200)

    // A copy of the agent gets a path of its own.
    const copy = await api.post(`/api/v1/workflow/${workflowId}/duplicate`, undefined, { token: account.token })
    expect(copy.status).toBe(200)
    const copied = await api.get(`/api/v1/workflow/fetch/${copy.body.id}`, { token: account.token })
    const copiedPath = copied.body.workflow_definition.nodes.find((node: { type: string }) => node.type === "trigger")
      .data.trigger_path
    expect(copiedPath).not.toBe(path)
    expect(copiedPath).toMatch(/^[0-9a-f-]{36}$/)
  })
})
