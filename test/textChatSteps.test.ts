import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { createWorkflow, salesDefinition, useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let otherLlm: ScriptedLlm

beforeAll(async () => {
  llm = await startScriptedLlm()
  otherLlm = await startScriptedLlm()
  server = await startServer()
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await llm?.close()
  await otherLlm?.close()
})

beforeEach(() => {
  llm.reset()
  otherLlm.reset()
})

const chatPath = (workflowId: number) => `/api/v1/workflow/${workflowId}/text-chat/sessions`

const setup = async () => {
  const account = await newAccount(api, "steps")
  await useLlm(api, account, llm.baseUrl)
  const workflowId = await createWorkflow(api, server, account, salesDefinition(), {
    templateContextVariables: { company: "Acme" }
  })
  return { account, workflowId }
}

const start = async (account: TestAccount, workflowId: number, body: unknown = {}) => {
  const created = await api.post(chatPath(workflowId), body, { token: account.token })
  expect(created.status).toBe(200)
  return created.body.workflow_run_id as number
}

const say = async (account: TestAccount, workflowId: number, runId: number, text: string) => {
  const answered = await api.post(`${chatPath(workflowId)}/${runId}/messages`, { text }, { token: account.token })
  expect(answered.status).toBe(200)
  return answered.body
}

describe("text chat steps", () => {
  it("answers each message with exactly the session a later read returns", async () => {
    const { account, workflowId } = await setup()
    const runId = await start(account, workflowId)
    llm.enqueue(
      reply.content("Shall I tell you more?", { usage: { prompt_tokens: 11, completion_tokens: 5 } }),
      reply.toolCalls([{ name: "interested", arguments: {} }], { usage: { prompt_tokens: 13, completion_tokens: 2 } }),
      reply.content("What is your budget?", { usage: { prompt_tokens: 17, completion_tokens: 4 } })
    )
    for (const text of ["Hello", "Yes please"]) {
      // What was said and the tools called belong to the exchange; the rest is the session.
      const { reply: said, tool_calls: _called, ...answered } = await say(account, workflowId, runId, text)
      const read = await api.get(`${chatPath(workflowId)}/${runId}`, { token: account.token })
      expect(said).toEqual(answered.transcript.at(-1).text)
      expect(read.body).toEqual(answered)
    }
    const read = await api.get(`${chatPath(workflowId)}/${runId}`, { token: account.token })
    expect(read.body.node_id).toBe("qualify")
    expect(read.body.transcript.map((turn: any) => turn.text)).toEqual([
      "Hi there, this is Acme!",
      "Hello",
      "Shall I tell you more?",
      "Yes please",
      "What is your budget?"
    ])
    expect(read.body.usage).toEqual({ prompt_tokens: 41, completion_tokens: 11, service_tokens: 52 })
    const conversation = await api.get(`/api/v2/conversations/${runId}`, { apiKey: await newApiKey(api, account) })
    expect(conversation.body.data.usage).toMatchObject({ prompt_tokens: 41, completion_tokens: 11, service_tokens: 52 })
  })

  it("counts a chat's tokens in the usage reports once, when it ends", async () => {
    const { account, workflowId } = await setup()
    const runId = await start(account, workflowId)
    llm.enqueue(
      reply.content("One.", { usage: { prompt_tokens: 7, completion_tokens: 3 } }),
      reply.content("Two.", { usage: { prompt_tokens: 9, completion_tokens: 1 } })
    )
    await say(account, workflowId, runId, "First")
    await say(account, workflowId, runId, "Second")
    const ended = await api.post(`${chatPath(workflowId)}/${runId}/end`, undefined, { token: account.token })
    expect(ended.body.usage).toEqual({ prompt_tokens: 16, completion_tokens: 4, service_tokens: 20 })

    const usage = await api.get("/api/v1/organizations/usage/runs", { token: account.token })
    expect(usage.body).toMatchObject({ total_count: 1, total_service_tokens: 20 })
    expect(usage.body.runs[0].service_tokens).toBe(20)
    const day = (offset: number) => new Date(Date.now() + offset * 86_400_000).toISOString().slice(0, 10)
    const daily = await api.get(
      `/api/v1/organizations/usage/daily-breakdown?start_date=${day(-1)}&end_date=${day(1)}`,
      { token: account.token }
    )
    expect(daily.body).toMatchObject({ total_runs: 1, total_service_tokens: 20 })
  })

  it("keeps a draft session on the definition it started with, message after message", async () => {
    const { account, workflowId } = await setup()
    const saveDraft = async (qualifyPrompt: string) => {
      const draft = salesDefinition()
      draft.nodes[1]!.data.prompt = qualifyPrompt
      expect(
        (await api.put(`/api/v1/workflow/${workflowId}`, { workflow_definition: draft }, { token: account.token }))
          .status
      ).toBe(200)
    }
    await saveDraft("Ask about their budget, as the draft says.")
    const runId = await start(account, workflowId, { use_draft: true })
    await saveDraft("Ask about their timeline.")

    llm.enqueue(
      reply.toolCalls([{ name: "interested", arguments: {} }]),
      reply.content("Your budget?"),
      reply.content("And who decides?")
    )
    await say(account, workflowId, runId, "Yes")
    await say(account, workflowId, runId, "About 10k")
    const systemPrompts = llm.requests.map((request) => request.body.messages[0].content as string)
    expect(systemPrompts).toHaveLength(3)
    expect(systemPrompts[1]).toMatch(/\n\nAsk about their budget, as the draft says\.$/)
    expect(systemPrompts[2]).toBe(systemPrompts[1])
  })

  it("uses a changed LLM setting from the very next message", async () => {
    const { account, workflowId } = await setup()
    const runId = await start(account, workflowId)
    llm.enqueue(reply.content("From the first model."))
    expect((await say(account, workflowId, runId, "One")).reply).toBe("From the first model.")

    await useLlm(api, account, otherLlm.baseUrl)
    otherLlm.enqueue(reply.content("From the second model."))
    expect((await say(account, workflowId, runId, "Two")).reply).toBe("From the second model.")
    expect(llm.requests).toHaveLength(1)
    expect(otherLlm.requests).toHaveLength(1)
  })

  it("starts a session right after an LLM is configured", async () => {
    const account = await newAccount(api, "late-llm")
    const workflowId = await createWorkflow(api, server, account, salesDefinition())
    const refused = await api.post(chatPath(workflowId), {}, { token: account.token })
    expect(refused.status).toBe(409)
    await useLlm(api, account, llm.baseUrl)
    await start(account, workflowId)
  })
})
