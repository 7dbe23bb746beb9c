import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { createWorkflow, readEvents, salesDefinition, useLlm } from "./support/chatFixtures.ts"
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

beforeEach(() => llm.reset())

const chatPath = (workflowId: number) => `/api/v1/workflow/${workflowId}/text-chat/sessions`

const setup = async (definition: unknown = salesDefinition(), options: Parameters<typeof createWorkflow>[4] = {}) => {
  const account = await newAccount(api, "chat")
  await useLlm(api, account, llm.baseUrl)
  const workflowId = await createWorkflow(api, server, account, definition, options)
  return { account, workflowId }
}

const start = async (account: TestAccount, workflowId: number, body: unknown = {}) => {
  const created = await api.post(chatPath(workflowId), body, { token: account.token })
  expect(created.status).toBe(200)
  return created.body
}

const say = (account: TestAccount, workflowId: number, runId: number, text: string) =>
  api.post(`${chatPath(workflowId)}/${runId}/messages`, { text }, { token: account.token })

const systemPromptOf = (index: number): string => llm.requests[index]!.body.messages[0].content

describe("text chat sessions", () => {
  it("opens with the start greeting rendered from initial_context over template defaults, without calling the model", async () => {
    const { account, workflowId } = await setup(salesDefinition(), {
      templateContextVariables: { company: "Acme", product: "widgets" }
    })
    const session = await start(account, workflowId, { initial_context: { first_name: "Ada" } })
    expect(session.reply).toBe("Hi Ada, this is Acme!")
    expect(session.state).toBe("running")
    expect(session.node_id).toBe("start")
    expect(session.transcript).toEqual([{
      role: "assistant",
      text: "Hi Ada, this is Acme!",
      node_id: "start",
      at: expect.any(String)
    }])
    expect(llm.requests).toHaveLength(0)

    const fallback = await start(account, workflowId)
    expect(fallback.reply).toBe("Hi there, this is Acme!")

    const read = await api.get(`${chatPath(workflowId)}/${session.workflow_run_id}`, { token: account.token })
    expect(read.status).toBe(200)
    expect(read.body.initial_context).toEqual({ first_name: "Ada" })
  })

  it("uses a per-run greeting override from initial_context", async () => {
    const { account, workflowId } = await setup()
    const session = await start(account, workflowId, {
      initial_context: { first_name: "Bo", greeting_override: "Hello {{first_name}}, calling about your order." }
    })
    expect(session.reply).toBe("Hello Bo, calling about your order.")
  })

  it("renders the system prompt from the global and node prompts and offers each edge as a tool plus end_call", async () => {
    const { account, workflowId } = await setup(salesDefinition(), {
      templateContextVariables: { company: "Acme", product: "widgets" }
    })
    const session = await start(account, workflowId, { initial_context: { first_name: "Ada", product: "gadgets" } })
    llm.enqueue(reply.content("Great to hear from you, Ada."))
    const answer = await say(account, workflowId, session.workflow_run_id, "Hello")
    expect(answer.status).toBe(200)
    expect(answer.body.reply).toBe("Great to hear from you, Ada.")
    expect(systemPromptOf(0)).toBe(
      "Be brief. Company: Acme.\n\nYou sell gadgets for Acme. Ask whether Ada is interested."
    )
    expect(llm.requests[0]!.toolNames).toEqual(["interested", "end_call"])
    expect(llm.requests[0]!.body.tools[0].function.description).toBe("The caller wants to hear more")
    expect(llm.requests[0]!.body.messages.slice(1)).toEqual([
      { role: "assistant", content: "Hi Ada, this is Acme!" },
      { role: "user", content: "Hello" }
    ])
  })

  it("follows edges chosen by tool calls, speaks transition speech, extracts variables and maps the disposition", async () => {
    const { account, workflowId } = await setup(salesDefinition({ transitionSpeech: "Let me note that down." }), {
      templateContextVariables: { company: "Acme", product: "widgets" },
      dispositionCodes: ["QUALIFIED", "NOT_INTERESTED"]
    })
    const session = await start(account, workflowId)
    const runId = session.workflow_run_id

    // start: the model moves on without words, so qualify answers the same message.
    llm.enqueue(
      reply.toolCalls([{ name: "interested", arguments: {} }]),
      reply.content("What budget do you have in mind?")
    )
    const first = await say(account, workflowId, runId, "Yes, tell me more")
    expect(first.status).toBe(200)
    expect(first.body.reply).toBe("Let me note that down.\nWhat budget do you have in mind?")
    expect(first.body.node_id).toBe("qualify")
    expect(systemPromptOf(1)).toBe("Be brief. Company: Acme.\n\nAsk about their budget.")
    expect(llm.requests[1]!.toolNames).toEqual(["budget_known_done", "end_call"])

    // qualify → end: leaving qualify extracts; end says goodbye and ends; then the disposition.
    llm.enqueue(
      reply.toolCalls([{ name: "budget_known_done", arguments: {} }]),
      reply.json({ budget: "5000", decision_maker: true, invented: 1 }),
      reply.content("Thanks, goodbye!"),
      reply.json({ call_disposition: "Qualified lead", mapped_call_disposition: "QUALIFIED" })
    )
    const second = await say(account, workflowId, runId, "About 5000 dollars, and I decide")
    expect(second.status).toBe(200)
    expect(second.body.reply).toBe("Thanks, goodbye!")
    expect(second.body.state).toBe("completed")
    expect(second.body.end_reason).toBe("end_node_reached")
    expect(second.body.gathered_context).toEqual({
      budget: 5000,
      decision_maker: true,
      call_disposition: "Qualified lead",
      mapped_call_disposition: "QUALIFIED"
    })
    expect(llm.requests[3]!.body.response_format.type).toBe("json_schema")
    expect(llm.requests[4]!.toolNames).toEqual([])
    expect(llm.requests[5]!.body.response_format.json_schema.schema.properties.mapped_call_disposition.enum).toEqual([
      "QUALIFIED",
      "NOT_INTERESTED"
    ])
    expect(second.body.transcript.map((turn: any) => [turn.role, turn.node_id])).toEqual([
      ["assistant", "start"],
      ["user", "start"],
      ["assistant", "qualify"],
      ["assistant", "qualify"],
      ["user", "qualify"],
      ["assistant", "end"]
    ])

    const after = await say(account, workflowId, runId, "Hello?")
    expect(after.status).toBe(409)
    expect(after.body.detail).toContain("ended")
  })

  it("reports the tools the agent called in each exchange and the variables extracted so far, while the chat goes on", async () => {
    const definition = salesDefinition()
    // qualify leads to a follow-up step, so what it extracted is known before the conversation ends.
    const withFollowUp = {
      nodes: [
        ...definition.nodes,
        {
          id: "follow",
          type: "agentNode",
          position: { x: 0, y: 0 },
          data: { name: "Follow up", prompt: "Offer a demo." }
        }
      ],
      edges: [
        definition.edges[0]!,
        { id: "e2", source: "qualify", target: "follow", data: { label: "Budget known", condition: "Budget known" } },
        { id: "e3", source: "follow", target: "end", data: { label: "Done", condition: "Nothing more" } }
      ]
    }
    const { account, workflowId } = await setup(withFollowUp)
    const session = await start(account, workflowId)
    expect(session.extracted_variables).toEqual({})
    const runId = session.workflow_run_id

    llm.enqueue(
      reply.toolCalls([{ name: "interested", arguments: {} }]),
      reply.content("What budget do you have in mind?")
    )
    const first = await say(account, workflowId, runId, "Yes, tell me more")
    expect(first.body.tool_calls).toEqual([
      { name: "interested", from_node_id: "start", edge_id: "e1", to_node_id: "qualify" }
    ])
    expect(first.body.extracted_variables).toEqual({})

    llm.enqueue(
      reply.toolCalls([{ name: "budget_known", arguments: {} }]),
      reply.json({ budget: 5000, decision_maker: true }),
      reply.content("Would you like a demo?")
    )
    const response = await fetch(`${server.url}${chatPath(workflowId)}/${runId}/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${account.token}`,
        "content-type": "application/json",
        accept: "text/event-stream"
      },
      body: JSON.stringify({ text: "About 5000 dollars" })
    })
    const message = (await readEvents(response)).at(-1)!
    expect(message.event).toBe("message")
    expect(message.data).toMatchObject({
      state: "running",
      node_id: "follow",
      tool_calls: [{ name: "budget_known", from_node_id: "qualify", edge_id: "e2", to_node_id: "follow" }],
      extracted_variables: { budget: 5000, decision_maker: true },
      gathered_context: {}
    })
    const read = await api.get(`${chatPath(workflowId)}/${runId}`, { token: account.token })
    expect(read.body.extracted_variables).toEqual({ budget: 5000, decision_maker: true })

    llm.enqueue(reply.toolCalls([{ name: "end_call", arguments: {} }], { content: "Goodbye!" }))
    const last = await say(account, workflowId, runId, "No thanks, bye")
    expect(last.body).toMatchObject({
      state: "completed",
      tool_calls: [{ name: "end_call", from_node_id: "follow", edge_id: null, to_node_id: null }]
    })
  })

  it("ends when the model calls end_call, with the end reason as disposition when the workflow has no codes", async () => {
    const { account, workflowId } = await setup()
    const session = await start(account, workflowId)
    llm.enqueue(reply.toolCalls([{ name: "end_call", arguments: {} }], { content: "Goodbye!" }))
    const answer = await say(account, workflowId, session.workflow_run_id, "Not interested, bye")
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ reply: "Goodbye!", state: "completed", end_reason: "end_call_tool" })
    expect(answer.body.gathered_context).toEqual({
      call_disposition: "end_call_tool",
      mapped_call_disposition: "end_call_tool"
    })
    expect(llm.pending()).toBe(0)
  })

  it("says goodbye when the model calls end_call without a word: one more model request, without tools, for the farewell", async () => {
    const { account, workflowId } = await setup()
    const session = await start(account, workflowId)
    llm.enqueue(
      reply.toolCalls([{ name: "end_call", arguments: {} }]),
      reply.content("Understood, thanks for your time. Goodbye!")
    )
    const answer = await say(account, workflowId, session.workflow_run_id, "Not interested, bye")
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({
      reply: "Understood, thanks for your time. Goodbye!",
      state: "completed",
      end_reason: "end_call_tool"
    })
    expect(answer.body.transcript.at(-1)).toMatchObject({
      role: "assistant",
      text: "Understood, thanks for your time. Goodbye!",
      node_id: "start"
    })
    expect(llm.requests[1]!.toolNames).toEqual([])
    expect(systemPromptOf(1)).toContain("The conversation is ending now")
    expect(llm.requests[1]!.body.messages.at(-1)).toEqual({ role: "user", content: "Not interested, bye" })
    expect(llm.pending()).toBe(0)
  })

  it("ends without a goodbye when the farewell request fails, keeping end_call as the reason", async () => {
    const { account, workflowId } = await setup()
    const session = await start(account, workflowId)
    llm.enqueue(reply.toolCalls([{ name: "end_call", arguments: {} }]), reply.error(500, "farewell failed"))
    const answer = await say(account, workflowId, session.workflow_run_id, "Bye")
    expect(answer.status).toBe(200)
    expect(answer.body).toMatchObject({ reply: "", state: "completed", end_reason: "end_call_tool" })
  })

  it("ends after max_turns answered messages", async () => {
    const { account, workflowId } = await setup(salesDefinition(), { configurations: { max_turns: 2 } })
    const session = await start(account, workflowId)
    llm.enqueue(reply.content("One."), reply.content("Two."))
    expect((await say(account, workflowId, session.workflow_run_id, "a")).body.state).toBe("running")
    const last = await say(account, workflowId, session.workflow_run_id, "b")
    expect(last.body).toMatchObject({ reply: "Two.", state: "completed", end_reason: "max_turns_reached" })
    const refused = await say(account, workflowId, session.workflow_run_id, "c")
    expect(refused.status).toBe(409)
    expect(refused.body.detail).toContain("max_turns_reached")
  })

  it("ends with llm_timeout when the model does not answer within the run's LLM timeout", async () => {
    const { account, workflowId } = await setup(salesDefinition(), { configurations: { llm_timeout_seconds: 1 } })
    const session = await start(account, workflowId)
    llm.enqueue(reply.hang())
    const started = Date.now()
    const answer = await say(account, workflowId, session.workflow_run_id, "Hello?")
    expect(Date.now() - started).toBeLessThan(5000)
    expect(answer.status).toBe(502)
    expect(answer.body.detail).toContain("did not answer in time")
    const read = await api.get(`${chatPath(workflowId)}/${session.workflow_run_id}`, { token: account.token })
    expect(read.body).toMatchObject({ state: "failed", end_reason: "llm_timeout" })
    expect(read.body.error).toContain("did not answer in time")
    expect(read.body.transcript.at(-1)).toMatchObject({ role: "user", text: "Hello?" })
  })

  it("records a provider failure mid-stream on the run and answers 502 without leaking provider text", async () => {
    const { account, workflowId } = await setup()
    const session = await start(account, workflowId)
    llm.enqueue(reply.breakOff("Sure, let me"))
    const answer = await say(account, workflowId, session.workflow_run_id, "Tell me")
    expect(answer.status).toBe(502)
    expect(answer.body.detail).toContain("session has ended")
    const read = await api.get(`${chatPath(workflowId)}/${session.workflow_run_id}`, { token: account.token })
    expect(read.body).toMatchObject({ state: "failed", end_reason: "llm_error" })
    expect(read.body.gathered_context.mapped_call_disposition).toBe("llm_error")

    const other = await setup()
    const fresh = await start(other.account, other.workflowId)
    llm.enqueue(reply.error(500))
    const rejected = await say(other.account, other.workflowId, fresh.workflow_run_id, "Hi")
    expect(rejected.status).toBe(502)
    expect(JSON.stringify(rejected.body)).not.toContain("internal-detail-7f3a")
    // The server is still fine.
    expect(
      (await api.get(`${chatPath(other.workflowId)}/${fresh.workflow_run_id}`, { token: other.account.token })).status
    ).toBe(200)
  })

  it("streams the reply as server-sent events token by token", async () => {
    const { account, workflowId } = await setup()
    const session = await start(account, workflowId)
    llm.enqueue(reply.content("Hello there, how can I help?"))
    const response = await fetch(`${server.url}${chatPath(workflowId)}/${session.workflow_run_id}/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${account.token}`,
        "content-type": "application/json",
        accept: "text/event-stream"
      },
      body: JSON.stringify({ text: "Hi" })
    })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    const events = await readEvents(response)
    const tokens = events.filter((event) => event.event === "token").map((event) => event.data.text)
    expect(tokens.length).toBeGreaterThan(3)
    expect(tokens.join("")).toBe("Hello there, how can I help?")
    expect(events.at(-1)!.event).toBe("message")
    expect(events.at(-1)!.data).toMatchObject({ reply: "Hello there, how can I help?", state: "running" })
  })

  it("sends a failure after the first token as an SSE error event", async () => {
    const { account, workflowId } = await setup()
    const session = await start(account, workflowId)
    llm.enqueue(reply.breakOff("Partial words here"))
    const response = await fetch(`${server.url}${chatPath(workflowId)}/${session.workflow_run_id}/messages`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${account.token}`,
        "content-type": "application/json",
        accept: "text/event-stream"
      },
      body: JSON.stringify({ text: "Hi" })
    })
    const events = await readEvents(response)
    expect(events.at(-1)).toMatchObject({ event: "error", data: { status: 502 } })
  })

  it("refuses a concurrent message to the same session with 409 and never interleaves", async () => {
    const { account, workflowId } = await setup()
    const session = await start(account, workflowId)
    llm.enqueue(reply.delay(600, reply.content("First answer.")), reply.content("Second answer."))
    const first = say(account, workflowId, session.workflow_run_id, "one")
    await new Promise((resolve) => setTimeout(resolve, 200))
    const second = await say(account, workflowId, session.workflow_run_id, "two")
    expect(second.status).toBe(409)
    expect(second.body.detail).toContain("still being answered")
    expect((await first).status).toBe(200)
    const third = await say(account, workflowId, session.workflow_run_id, "three")
    expect(third.body.reply).toBe("Second answer.")
    expect(third.body.transcript.map((turn: any) => turn.text)).toEqual([
      "Hi there, this is !",
      "one",
      "First answer.",
      "three",
      "Second answer."
    ])
  })

  it("totals usage exactly as the provider reported it, extraction and disposition included", async () => {
    const { account, workflowId } = await setup(salesDefinition(), { dispositionCodes: ["DONE"] })
    const session = await start(account, workflowId)
    llm.enqueue(
      reply.toolCalls([{ name: "interested", arguments: {} }], { usage: { prompt_tokens: 100, completion_tokens: 5 } }),
      reply.content("Budget?", { usage: { prompt_tokens: 120, completion_tokens: 3 } })
    )
    await say(account, workflowId, session.workflow_run_id, "yes")
    llm.enqueue(
      reply.json({ budget: 10, decision_maker: null }, { usage: { prompt_tokens: 40, completion_tokens: 9 } }),
      reply.json({ call_disposition: "ok", mapped_call_disposition: "DONE" }, {
        usage: { prompt_tokens: 30, completion_tokens: 7 }
      })
    )
    const ended = await api.post(`${chatPath(workflowId)}/${session.workflow_run_id}/end`, undefined, {
      token: account.token
    })
    expect(ended.status).toBe(200)
    expect(ended.body).toMatchObject({
      state: "completed",
      end_reason: "user_ended",
      gathered_context: { budget: 10, mapped_call_disposition: "DONE" }
    })
    expect(ended.body.usage).toEqual({ prompt_tokens: 290, completion_tokens: 24, service_tokens: 314 })
    const again = await api.post(`${chatPath(workflowId)}/${session.workflow_run_id}/end`, undefined, {
      token: account.token
    })
    expect(again.status).toBe(200)
    expect(again.body.usage.service_tokens).toBe(314)
  })

  it("runs the draft with use_draft and refuses a workflow without a configured LLM", async () => {
    const { account, workflowId } = await setup()
    const edited = salesDefinition({ greeting: "Draft hello" })
    expect(
      (await api.put(`/api/v1/workflow/${workflowId}`, { workflow_definition: edited }, { token: account.token }))
        .status
    ).toBe(200)
    expect((await start(account, workflowId)).reply).toBe("Hi there, this is !")
    expect((await start(account, workflowId, { use_draft: true })).reply).toBe("Draft hello")

    const bare = await newAccount(api, "nollm")
    const bareWorkflow = await createWorkflow(api, server, bare, salesDefinition())
    const refused = await api.post(chatPath(bareWorkflow), {}, { token: bare.token })
    expect(refused.status).toBe(409)
    expect(refused.body.detail).toContain("No LLM is configured")
  })

  it("validates input, requires credentials and scopes, and isolates tenants", async () => {
    const { account, workflowId } = await setup()
    const session = await start(account, workflowId)
    const runId = session.workflow_run_id

    const empty = await say(account, workflowId, runId, "   ")
    expect(empty.status).toBe(422)
    expect(empty.body.detail[0].loc).toEqual(["body", "text"])
    expect((await api.post(chatPath(workflowId), { use_draft: "yes" }, { token: account.token })).status).toBe(422)

    expect((await api.post(chatPath(workflowId), {})).status).toBe(401)
    expect((await api.get(`${chatPath(workflowId)}/${runId}`)).status).toBe(401)

    const readOnly = await newApiKey(api, account, ["agents:read"])
    expect((await api.post(`${chatPath(workflowId)}/${runId}/messages`, { text: "hi" }, { apiKey: readOnly })).status)
      .toBe(403)
    expect((await api.post(chatPath(workflowId), {}, { apiKey: readOnly })).status).toBe(403)

    const intruder = await newAccount(api, "intruder")
    await useLlm(api, intruder, llm.baseUrl)
    expect((await api.post(chatPath(workflowId), {}, { token: intruder.token })).status).toBe(404)
    expect((await api.get(`${chatPath(workflowId)}/${runId}`, { token: intruder.token })).status).toBe(404)
    expect(
      (await api.post(`${chatPath(workflowId)}/${runId}/messages`, { text: "hi" }, { token: intruder.token })).status
    ).toBe(404)
    expect((await api.post(`${chatPath(workflowId)}/${runId}/end`, undefined, { token: intruder.token })).status).toBe(
      404
    )

    // Under another workflow of the same organization the session does not exist either.
    const otherWorkflow = await createWorkflow(api, server, account, salesDefinition())
    expect((await api.get(`${chatPath(otherWorkflow)}/${runId}`, { token: account.token })).status).toBe(404)
    expect(llm.requests).toHaveLength(0)
  })

  it("shows a session's transcript only to keys that may read conversations", async () => {
    const { account, workflowId } = await setup()
    const runId = (await start(account, workflowId)).workflow_run_id
    const session = `${chatPath(workflowId)}/${runId}`
    const agentsOnly = await newApiKey(api, account, ["agents:read", "agents:write"])
    const conversations = await newApiKey(api, account, ["conversations:read"])
    const chatting = await newApiKey(api, account, ["agents:write", "conversations:read"])

    // Every one of these answers with the whole transcript, so agents:* alone is not enough.
    const refusals = [
      await api.get(session, { apiKey: agentsOnly }),
      await api.post(chatPath(workflowId), {}, { apiKey: agentsOnly }),
      await api.post(`${session}/messages`, { text: "hi" }, { apiKey: agentsOnly }),
      await api.post(`${session}/end`, undefined, { apiKey: agentsOnly })
    ]
    expect(refusals.map((refusal) => refusal.status)).toEqual([403, 403, 403, 403])
    expect(refusals[0]!.body.detail).toContain("conversations:read")
    expect(JSON.stringify(refusals)).not.toContain("Hi there")
    expect(llm.requests).toHaveLength(0)

    const read = await api.get(session, { apiKey: conversations })
    expect(read.status).toBe(200)
    expect(read.body.transcript[0].text).toMatch(/^Hi there/)
    expect((await api.post(`${session}/messages`, { text: "hi" }, { apiKey: conversations })).status).toBe(403)

    llm.enqueue(reply.content("Hello again."))
    const answer = await api.post(`${session}/messages`, { text: "hi" }, { apiKey: chatting })
    expect(answer.status).toBe(200)
    expect(answer.body.reply).toBe("Hello again.")
  })

  it("counts runs in the workflow's total_runs", async () => {
    const { account, workflowId } = await setup()
    await start(account, workflowId)
    await start(account, workflowId)
    const workflow = await api.get(`/api/v1/workflow/fetch/${workflowId}`, { token: account.token })
    expect(workflow.body.total_runs).toBe(2)
  })
})
