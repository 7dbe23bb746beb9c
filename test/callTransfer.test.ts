import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import {
  carrierNumber,
  type CarrierProviderName,
  carrierProviders,
  type CarrierStandIn,
  startCarrierStandIn
} from "./support/carrierStandIns.ts"
import { createWorkflow } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { eventually } from "./support/dialerFixtures.ts"
import { type FakeDeepgram, startFakeDeepgram } from "./support/fakeDeepgram.ts"
import { type FakeSpeechApis, startFakeSpeechApis } from "./support/fakeSpeechApis.ts"
import type { DestinationBehaviour } from "./support/loopbackCarrier.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { keyThenListen, switchboardDefinition, transferAccount } from "./support/switchboard.ts"
import { useVoiceModels } from "./support/voiceFixtures.ts"
import { startWebhookReceiver, type WebhookReceiver } from "./support/webhookReceiver.ts"

// Cold transfers over every carrier's loopback stand-in: the caller presses a key, the model calls
// the transfer tool with the destination that key names, and the carrier rings it as scripted.

let server: RunningServer
let api: Client
const standIns = new Map<CarrierProviderName, CarrierStandIn>()
let deepgram: FakeDeepgram
let speech: FakeSpeechApis
let llm: ScriptedLlm
let receiver: WebhookReceiver

/** What a transfer resolver was sent: its path (which says how it answers), headers and JSON body. */
interface ResolverRequest {
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: unknown
}
const resolverRequests: Array<ResolverRequest> = []
let resolver: http.Server
let resolverUrl: string

/**
 * A customer's transfer resolver, as Dograh calls it: `/answer?to=…` answers `to` in
 * `transfer_context.destination`, `/garbage` a body with no destination, `/slow` nothing for 3 s.
 */
const startResolver = () =>
  new Promise<void>((resolve) => {
    resolver = http.createServer((request, response) => {
      const chunks: Array<Buffer> = []
      request.on("data", (chunk: Buffer) => chunks.push(chunk))
      request.on("end", () => {
        const url = new URL(request.url ?? "/", "http://resolver")
        resolverRequests.push({
          path: url.pathname,
          headers: request.headers,
          body: JSON.parse(Buffer.concat(chunks).toString("utf8") || "null")
        })
        const answer = (body: unknown) => {
          response.writeHead(200, { "content-type": "application/json" })
          response.end(JSON.stringify(body))
        }
        if (url.pathname === "/answer") answer({ transfer_context: { destination: url.searchParams.get("to") } })
        else if (url.pathname === "/garbage") answer({ transfer_context: { destination: "the sales desk" } })
        else setTimeout(() => answer({ transfer_context: { destination: "+14155550000" } }), 3000)
      })
    })
    resolver.listen(0, "127.0.0.1", () => {
      resolverUrl = `http://127.0.0.1:${(resolver.address() as AddressInfo).port}`
      resolve()
    })
  })

const GREETING = "Press 1 for sales, 2 for support or 3 for billing."
const UNAVAILABLE = "I am sorry, they are not available right now."
const KEYS: Record<string, string> = { "1": "sales", "2": "support", "3": "billing" }

const switchboardOf = (toolUuid: string) =>
  switchboardDefinition(toolUuid, GREETING, "Transfer the caller to the department they choose.")

/** The model of a switchboard: the key pressed names the destination; a transfer that failed is said so. */
const switchboard = (request: any): ReturnType<typeof reply.content> => {
  const messages: ReadonlyArray<{ role: string; content?: string }> = request.messages ?? []
  const last = messages.at(-1)
  if (last?.role === "tool") return reply.content(UNAVAILABLE)
  const pressed = /^The caller pressed (\d) on the keypad\.$/.exec(String(last?.content ?? ""))
  if (pressed && KEYS[pressed[1]!]) {
    return reply.toolCalls([{ name: "transfer_the_caller", arguments: { destination: KEYS[pressed[1]!] } }])
  }
  return reply.content("Which department?")
}

beforeAll(async () => {
  ;[deepgram, speech, llm] = await Promise.all([
    startFakeDeepgram(),
    startFakeSpeechApis(),
    startScriptedLlm({ answer: switchboard })
  ])
  receiver = await startWebhookReceiver()
  await startResolver()
  for (const provider of carrierProviders) standIns.set(provider, await startCarrierStandIn(provider))
  server = await startServer({ TALKGRAPH_SCHEDULER_POLL_MS: "200", TALKGRAPH_WEBHOOK_POLL_MS: "100" }, {
    ownDatabase: true
  })
  api = client(server.url)
}, 60_000)
afterAll(async () => {
  await server?.close()
  await Promise.all([...standIns.values()].map((standIn) => standIn.close()))
  await Promise.all([deepgram?.close(), speech?.close(), llm?.close(), receiver?.close()])
  resolver?.closeAllConnections()
  await new Promise((resolve) => resolver?.close(resolve))
})

const query = <T>(text: (sql: SqlClient.SqlClient) => Effect.Effect<ReadonlyArray<T>, unknown>) =>
  server.run(Effect.flatMap(SqlClient.SqlClient, text))

interface StoredRun {
  readonly state: string
  readonly end_reason: string
  readonly disposition: string | null
  readonly transcript: ReadonlyArray<{ role: string; text: string; tool_calls?: ReadonlyArray<any> }>
  readonly gathered_context: Record<string, unknown>
}

const endedRun = (runId: number) =>
  eventually(
    async () => {
      const [run] = await query<StoredRun & { ended_at: unknown; busy_token: unknown }>((sql) =>
        sql`SELECT * FROM runs WHERE id = ${runId}`
      )
      return run?.ended_at && run.busy_token === null ? run : undefined
    },
    45_000,
    `run ${runId} ended`
  )

let sequence = 0

/**
 * One call over `provider` whose caller presses `key`; the destinations (sales: a number, support:
 * a SIP URI, billing: a number) behave as `behaviour` says when the carrier rings them.
 */
const transferCall = async (
  provider: CarrierProviderName,
  key: string,
  behaviour: DestinationBehaviour,
  options: {
    readonly webhooks?: boolean
    /** The tool's config in place of the listed destinations, given the destination the key names. */
    readonly toolConfig?: (chosen: string, account: { readonly token: string }) => Promise<Record<string, unknown>>
  } = {}
) => {
  const standIn = standIns.get(provider)!
  const index = ++sequence
  const destinations = {
    sales: `+1415555${String(7000 + index)}`,
    support: `sip:support${index}@pbx.example.com`,
    billing: `+1415555${String(8000 + index)}`
  }
  const chosen = destinations[KEYS[key] as keyof typeof destinations]
  const asCarrierWrites = chosen.startsWith("sip:") ? chosen : carrierNumber(provider, chosen)
  standIn.destinationScript(asCarrierWrites, behaviour)

  const account = await transferAccount(
    api,
    { llmUrl: llm.baseUrl, deepgram, tts: speech },
    standIn,
    options.webhooks ? receiver : null
  )
  const tool = await api.post("/api/v1/tools", {
    name: "Transfer the caller",
    description: "Hands the caller to a department",
    definition: {
      type: "transfer_call",
      config: options.toolConfig ? await options.toolConfig(chosen, account) : {
        timeout: 20,
        destinations: [
          { name: "sales", destination: destinations.sales },
          { name: "support", destination: destinations.support, description: "technical help" },
          { name: "billing", destination: destinations.billing }
        ]
      }
    }
  }, { token: account.token })
  expect(tool.status).toBe(200)
  const workflowId = await createWorkflow(
    api,
    server,
    account,
    switchboardOf(tool.body.tool_uuid)
  )
  const apiKey = await newApiKey(api, account, ["calls:write", "calls:read"])
  const to = `+1415555${String(6000 + index)}`
  standIn.calleeScript(carrierNumber(provider, to), keyThenListen(key))
  const created = await api.post("/api/v2/calls", { agent_id: workflowId, phone_number: to }, { apiKey })
  expect(created.status).toBe(201)
  const runId = created.body.data.run_id as number
  const run = await endedRun(runId)
  const call = standIn.calls().find((candidate) => candidate.to === carrierNumber(provider, to))!
  await eventually(async () => call.endedAt !== null || undefined, 10_000, "the carrier's call ended")
  return { provider, runId, run, call, destination: asCarrierWrites }
}

/** The transfer tool's call on the transcript, with what the model was told. */
const toolCallOf = (run: StoredRun) =>
  run.transcript.flatMap((turn) => turn.tool_calls ?? []).find((call) => call.name === "transfer_the_caller")

describe("cold transfer (transfer_call)", () => {
  it(
    "hands the caller to the destination on every carrier when it answers: the agent leaves, the run ends transferred with the outcome on it",
    async () => {
      const results = await Promise.all(carrierProviders.map((provider) => transferCall(provider, "1", "answers")))
      for (const { call, destination, provider, run } of results) {
        expect({ provider, end_reason: run.end_reason, state: run.state }).toEqual({
          provider,
          end_reason: "transferred",
          state: "completed"
        })
        expect(run.gathered_context).toMatchObject({ transfer_outcome: "answered", transfer_destination: "sales" })
        // Without disposition codes the end reason is the disposition.
        expect(run.disposition).toBe("transferred")
        expect(JSON.parse(toolCallOf(run).result)).toEqual({ outcome: "answered", destination: "sales" })
        // The carrier rang the destination once, bridged it, and the call ended with the bridged conversation.
        expect({ provider, transfers: call.transfers }).toEqual({
          provider,
          transfers: [{ destination, timeoutSeconds: 20, result: "answered" }]
        })
        expect({ provider, endedBy: call.endedBy, hungUpByApi: call.hungUpByApi }).toEqual({
          provider,
          endedBy: "transfer",
          hungUpByApi: false
        })
        // Nothing more was said after the transfer was asked for.
        expect(run.transcript.at(-1)!.tool_calls?.[0]?.name).toBe("transfer_the_caller")
      }
      // The model chose among the destinations by name.
      const offered = llm.requests.flatMap((request) => request.body.tools ?? [])
        .find((tool: any) => tool.function?.name === "transfer_the_caller")
      expect(offered.function.parameters).toMatchObject({
        properties: { destination: { type: "string", enum: ["sales", "support", "billing"] } },
        required: ["destination"]
      })
      expect(carrierProviders.flatMap((provider) => standIns.get(provider)!.callbackFailures())).toEqual([])
    },
    90_000
  )

  it("sends call.transfer with the destination and how it went once the run is stored", async () => {
    const { runId } = await transferCall("twilio", "3", "no-answer", { webhooks: true })
    const message = await eventually(
      async () => receiver.accepted().find((candidate) => candidate.body.type === "call.transfer"),
      15_000,
      "call.transfer delivered"
    )
    expect(message.body.data).toMatchObject({
      run_id: runId,
      transfer: { destination: "billing", outcome: "no_answer" }
    })
  }, 90_000)

  it(
    "records a busy SIP destination and a destination that does not answer; the caller comes back to the agent on every carrier",
    async () => {
      const results = await Promise.all(
        carrierProviders.flatMap((provider) => [
          transferCall(provider, "2", "busy").then((result) => ({ ...result, expected: "busy" })),
          transferCall(provider, "3", "no-answer").then((result) => ({ ...result, expected: "no_answer" }))
        ])
      )
      for (const { call, destination, expected, provider, run } of results) {
        const chosen = expected === "busy" ? "support" : "billing"
        expect({ provider, gathered: run.gathered_context }).toMatchObject({
          provider,
          gathered: { transfer_outcome: expected, transfer_destination: chosen }
        })
        expect(JSON.parse(toolCallOf(run).result)).toMatchObject({ outcome: expected, destination: chosen })
        expect(call.transfers).toEqual([
          { destination, timeoutSeconds: 20, result: expected === "busy" ? "busy" : "no-answer" }
        ])
        // The caller is back with the agent (Telnyx: the call never left its stream; Twilio and
        // Plivo: the Dial's action connects a new stream; Vonage: the synchronous connect's event
        // answers an NCCO connecting a new WebSocket), who tells them; they hang up.
        expect({ provider, end_reason: run.end_reason }).toEqual({ provider, end_reason: "user_hangup" })
        expect({ provider, transcript: run.transcript }).toMatchObject({
          provider,
          transcript: expect.arrayContaining([expect.objectContaining({ role: "assistant", text: UNAVAILABLE })])
        })
        expect({ provider, endedBy: call.endedBy }).toEqual({ provider, endedBy: "far-end" })
        expect(run.state).toBe("completed")
      }
      expect(carrierProviders.flatMap((provider) => standIns.get(provider)!.callbackFailures())).toEqual([])
    },
    120_000
  )

  it("answers the model in a text conversation that no one can be transferred, and the conversation goes on", async () => {
    const account = await newAccount(api)
    await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
    const tool = await api.post("/api/v1/tools", {
      name: "Transfer the caller",
      definition: {
        type: "transfer_call",
        config: {
          destinations: [{ name: "sales", destination: "+14155557999" }, {
            name: "support",
            destination: "sip:help@pbx.example.com"
          }]
        }
      }
    }, { token: account.token })
    const workflowId = await createWorkflow(
      api,
      server,
      account,
      switchboardOf(tool.body.tool_uuid)
    )
    const sessions = `/api/v1/workflow/${workflowId}/text-chat/sessions`
    const session = await api.post(sessions, {}, { token: account.token })
    expect(session.status).toBe(200)
    const runId = session.body.workflow_run_id as number
    const said = await api.post(`${sessions}/${runId}/messages`, { text: "The caller pressed 1 on the keypad." }, {
      token: account.token
    })
    expect(said.status).toBe(200)
    const [run] = await query<StoredRun & { ended_at: unknown }>((sql) => sql`SELECT * FROM runs WHERE id = ${runId}`)
    expect(run!.ended_at).toBeNull()
    expect(toolCallOf(run!)).toMatchObject({ status: "error" })
    expect(toolCallOf(run!).result).toContain("impossible in a text conversation")
    expect(run!.transcript.at(-1)).toMatchObject({ role: "assistant", text: UNAVAILABLE })
    expect(run!.gathered_context ?? {}).not.toHaveProperty("transfer_outcome")
  })

  it("refuses transfer callbacks and instruction fetches that the run's carrier account did not sign", async () => {
    const { runId } = await transferCall("twilio", "1", "answers")
    for (
      const path of [
        `/api/v1/telephony/twilio/transfer/${runId}`,
        `/api/v1/telephony/plivo/transfer/${runId}/markup?to=%2B14155550100&timeout=20`
      ]
    ) {
      const forged = await fetch(`${server.url}${path}`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded", "x-twilio-signature": "forged" },
        body: "DialCallStatus=completed"
      })
      expect({ path, status: forged.status }).toEqual({ path, status: 403 })
    }
  })
})

describe("transfer destination from a resolver (destination_source: dynamic)", () => {
  const SECRET = "resolver-secret-token"

  /** A dynamic transfer_call config asking `path` of the resolver, with Dograh's resolver fields. */
  const dynamicConfig = (path: string) => async (_chosen: string, account: { readonly token: string }) => {
    const credential = await api.post("/api/v1/credentials", {
      name: `Resolver ${Math.random()}`,
      credential_type: "bearer_token",
      credential_data: { token: SECRET }
    }, { token: account.token })
    expect(credential.status).toBe(200)
    return {
      timeout: 20,
      destination_source: "dynamic",
      resolver: {
        type: "http",
        url: `${resolverUrl}${path}`,
        headers: { "X-Source": "talkgraph" },
        credential_uuid: credential.body.uuid,
        timeout_ms: 500,
        parameters: [{ name: "destination", type: "string", description: "The department the caller chose" }]
      }
    }
  }

  it(
    "transfers the caller where the resolver answers, sending it the model's arguments, the headers and the credential",
    async () => {
      const { call, destination, run } = await transferCall("twilio", "1", "answers", {
        toolConfig: async (chosen, account) =>
          dynamicConfig(`/answer?to=${encodeURIComponent(chosen)}`)(chosen, account)
      })
      expect({ end_reason: run.end_reason, gathered: run.gathered_context }).toMatchObject({
        end_reason: "transferred",
        gathered: { transfer_outcome: "answered" }
      })
      expect(call.transfers).toEqual([{ destination, timeoutSeconds: 20, result: "answered" }])
      const asked = resolverRequests.find((request) => request.path === "/answer")!
      expect(asked.body).toEqual({ destination: "sales" })
      expect(asked.headers).toMatchObject({
        authorization: `Bearer ${SECRET}`,
        "x-source": "talkgraph",
        "content-type": "application/json"
      })
      // The resolver's parameters are the tool's, as the model is offered it.
      const offered = llm.requests.flatMap((request) => request.body.tools ?? [])
        .filter((tool: any) => tool.function?.name === "transfer_the_caller")
        .map((tool: any) => tool.function.parameters)
      expect(offered).toContainEqual({
        type: "object",
        properties: { destination: { type: "string", description: "The department the caller chose" } },
        required: ["destination"],
        additionalProperties: false
      })
    },
    90_000
  )

  it(
    "tells the model when the resolver answers no valid destination or does not answer in time; the call goes on",
    async () => {
      const results = await Promise.all(
        ["/garbage", "/slow"].map((path) =>
          transferCall("twilio", "1", "answers", { toolConfig: dynamicConfig(path) }).then((result) => ({
            ...result,
            path
          }))
        )
      )
      for (const { call, path, run } of results) {
        expect({ path, end_reason: run.end_reason }).toEqual({ path, end_reason: "user_hangup" })
        expect(call.transfers).toEqual([])
        expect(toolCallOf(run)).toMatchObject({ status: "error" })
        expect(toolCallOf(run).result).toContain(
          path === "/garbage"
            ? "the transfer resolver answered the destination \"the sales desk\", which must be an E.164 number"
            : "the transfer resolver failed: the API did not answer within 500 ms"
        )
        expect(run.transcript.some((turn) => turn.role === "assistant" && turn.text === UNAVAILABLE)).toBe(true)
        expect(run.gathered_context ?? {}).not.toHaveProperty("transfer_outcome")
      }
    },
    90_000
  )

  it("never asks the resolver in a text conversation", async () => {
    const account = await newAccount(api)
    await useVoiceModels(api, account, { llmUrl: llm.baseUrl, deepgram, tts: speech })
    const tool = await api.post("/api/v1/tools", {
      name: "Transfer the caller",
      definition: { type: "transfer_call", config: await dynamicConfig("/answer?to=%2B14155557998")("", account) }
    }, { token: account.token })
    expect(tool.status).toBe(200)
    const workflowId = await createWorkflow(
      api,
      server,
      account,
      switchboardOf(tool.body.tool_uuid)
    )
    const sessions = `/api/v1/workflow/${workflowId}/text-chat/sessions`
    const session = await api.post(sessions, {}, { token: account.token })
    const runId = session.body.workflow_run_id as number
    const before = resolverRequests.length
    const said = await api.post(`${sessions}/${runId}/messages`, { text: "The caller pressed 1 on the keypad." }, {
      token: account.token
    })
    expect(said.status).toBe(200)
    const [run] = await query<StoredRun>((sql) => sql`SELECT * FROM runs WHERE id = ${runId}`)
    expect(toolCallOf(run!).result).toContain("impossible in a text conversation")
    expect(resolverRequests.length).toBe(before)
  })
})
