import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { createWorkflow, salesDefinition, useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm

beforeAll(async () => {
  llm = await startScriptedLlm()
  server = await startServer()
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await llm?.close()
})

const agentWithChats = async (count: number) => {
  const account = await newAccount(api, "v2conv")
  await useLlm(api, account, llm.baseUrl)
  const agentId = await createWorkflow(api, server, account, salesDefinition())
  const runIds: Array<number> = []
  for (let index = 0; index < count; index++) {
    const created = await api.post(
      `/api/v1/workflow/${agentId}/text-chat/sessions`,
      { initial_context: { n: index } },
      { token: account.token }
    )
    runIds.push(created.body.workflow_run_id)
  }
  const apiKey = await newApiKey(api, account, ["conversations:read"])
  return { account, agentId, runIds, apiKey }
}

describe("v2 conversations", () => {
  it("lists an agent's conversations newest first, paginated", async () => {
    const { agentId, runIds, apiKey } = await agentWithChats(3)
    const first = await api.get(`/api/v2/agents/${agentId}/conversations?page=1&page_size=2`, { apiKey })
    expect(first.status).toBe(200)
    expect(first.body.pagination).toEqual({ page: 1, page_size: 2, total_items: 3, total_pages: 2 })
    expect(first.body.data.map((item: any) => item.id)).toEqual([runIds[2], runIds[1]])
    const second = await api.get(`/api/v2/agents/${agentId}/conversations?page=2&page_size=2`, { apiKey })
    expect(second.body.data.map((item: any) => item.id)).toEqual([runIds[0]])
    const beyond = await api.get(`/api/v2/agents/${agentId}/conversations?page=5&page_size=2`, { apiKey })
    expect(beyond.body.data).toEqual([])

    const bad = await api.get(`/api/v2/agents/${agentId}/conversations?page_size=500`, { apiKey })
    expect(bad.status).toBe(422)
    expect(bad.body.error.code).toBe("validation_error")
  })

  it("reads one conversation with its transcript, contexts, disposition and usage", async () => {
    const { account, agentId, runIds, apiKey } = await agentWithChats(1)
    const runId = runIds[0]!
    llm.enqueue(
      reply.toolCalls([{ name: "end_call", arguments: {} }], {
        content: "Bye!",
        usage: { prompt_tokens: 11, completion_tokens: 2 }
      })
    )
    await api.post(`/api/v1/workflow/${agentId}/text-chat/sessions/${runId}/messages`, { text: "bye" }, {
      token: account.token
    })
    const read = await api.get(`/api/v2/conversations/${runId}`, { apiKey })
    expect(read.status).toBe(200)
    expect(read.body.data).toMatchObject({
      id: runId,
      agent_id: agentId,
      agent_version: 1,
      channel: "chat",
      mode: "textchat",
      direction: "inbound",
      status: "completed",
      caller_number: null,
      called_number: null,
      campaign_id: null,
      disposition: "end_call_tool",
      initial_context: { n: 0 },
      gathered_context: { mapped_call_disposition: "end_call_tool" },
      usage: { prompt_tokens: 11, completion_tokens: 2, service_tokens: 13, tts_characters: 0, stt_seconds: 0 }
    })
    expect(read.body.data.duration_seconds).toBeGreaterThanOrEqual(0)
    expect(read.body.data.transcript.map((turn: any) => turn.text)).toEqual(["Hi there, this is !", "bye", "Bye!"])
    expect(typeof read.body.data.created_at).toBe("string")
  })

  it("answers 401 without a key (or with a session token), 403 without the scope, 404 for unknown or foreign ids", async () => {
    const { account, agentId, runIds, apiKey } = await agentWithChats(1)
    expect((await api.get(`/api/v2/conversations/${runIds[0]}`)).status).toBe(401)
    const viaSession = await api.get(`/api/v2/conversations/${runIds[0]}`, { token: account.token })
    expect(viaSession.status).toBe(401)
    expect(viaSession.body.error.code).toBe("unauthorized")

    const agentsOnly = await newApiKey(api, account, ["agents:read"])
    const forbidden = await api.get(`/api/v2/agents/${agentId}/conversations`, { apiKey: agentsOnly })
    expect(forbidden.status).toBe(403)
    expect(forbidden.body.error.code).toBe("forbidden")
    expect((await api.get(`/api/v2/conversations/${runIds[0]}`, { apiKey: agentsOnly })).status).toBe(403)

    expect((await api.get(`/api/v2/conversations/999999999`, { apiKey })).body.error.code).toBe("not_found")
    expect((await api.get(`/api/v2/agents/999999999/conversations`, { apiKey })).status).toBe(404)

    const other = await agentWithChats(0)
    const foreignRun = await api.get(`/api/v2/conversations/${runIds[0]}`, { apiKey: other.apiKey })
    expect(foreignRun.status).toBe(404)
    const foreignAgent = await api.get(`/api/v2/agents/${agentId}/conversations`, { apiKey: other.apiKey })
    expect(foreignAgent.status).toBe(404)
  })

  it("declares both endpoints and V2_Conversation in the OpenAPI document", async () => {
    const spec = await api.get("/openapi.json")
    expect(spec.body.paths["/api/v2/agents/{agent_id}/conversations"].get).toBeDefined()
    expect(spec.body.paths["/api/v2/conversations/{conversation_id}"].get).toBeDefined()
    expect(Object.keys(spec.body.components.schemas.V2_Conversation.properties)).toEqual(expect.arrayContaining([
      "id",
      "agent_id",
      "agent_version",
      "channel",
      "mode",
      "direction",
      "status",
      "caller_number",
      "called_number",
      "campaign_id",
      "started_at",
      "ended_at",
      "duration_seconds",
      "disposition",
      "initial_context",
      "gathered_context",
      "transcript",
      "usage",
      "created_at"
    ]))
    expect(spec.body.paths["/api/v1/workflow/{workflow_id}/text-chat/sessions/{run_id}/messages"].post).toBeDefined()
  })
})
