import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { createWorkflow, salesDefinition, useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { salesRolePlay } from "./support/salesRolePlay.ts"
import { type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm

beforeAll(async () => {
  llm = await startScriptedLlm({ answer: salesRolePlay })
  server = await startServer()
  api = client(server.url)
})

afterAll(async () => {
  await server?.close()
  await llm?.close()
})

const eagerCase = {
  name: "Eager buyer qualifies",
  persona: "EAGER: a small-business owner who wants widgets and knows their budget.",
  variables: { first_name: "Ada" },
  max_turns: 4,
  expectations: {
    nodes_visited: ["qualify", "end"],
    variables: [{ name: "budget", equals: 5000 }, { name: "decision_maker", present: true }],
    disposition: ["QUALIFIED"],
    max_turns: 3,
    criteria: ["The agent asks about the caller's budget"]
  }
}

const refuserCase = {
  name: "Refuser is qualified anyway",
  persona: "REFUSER: busy, not interested, wants to get off the phone.",
  max_turns: 4,
  expectations: { nodes_visited: ["qualify"], criteria: ["The agent asks about the caller's budget"] }
}

interface Agent {
  readonly account: TestAccount
  readonly agentId: number
  readonly key: string
}

const agent = async (label: string, scopes: ReadonlyArray<string> = ["tests:read", "tests:write"]): Promise<Agent> => {
  const account = await newAccount(api, label)
  await useLlm(api, account, llm.baseUrl)
  const agentId = await createWorkflow(api, server, account, salesDefinition(), {
    templateContextVariables: { company: "Acme", product: "widgets" },
    dispositionCodes: ["QUALIFIED", "NOT_INTERESTED"]
  })
  return { account, agentId, key: await newApiKey(api, account, scopes) }
}

const addCase = async ({ agentId, key }: Agent, body: unknown) => {
  const created = await api.post(`/api/v2/agents/${agentId}/tests`, body, { apiKey: key })
  expect(created.status).toBe(201)
  return created.body.data.id as number
}

const finished = async ({ agentId, key }: Agent, runId: number) => {
  const deadline = Date.now() + 30_000
  for (;;) {
    const read = await api.get(`/api/v2/agents/${agentId}/test-runs/${runId}`, { apiKey: key })
    expect(read.status).toBe(200)
    if (read.body.data.status === "completed" || read.body.data.status === "failed") return read.body.data
    if (Date.now() > deadline) throw new Error(`test run ${runId} still ${read.body.data.status}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("agent test cases", () => {
  it("creates, lists, reads, changes and deletes cases in v2 envelopes", async () => {
    const owner = await agent("tests-crud")
    const id = await addCase(owner, eagerCase)
    const read = await api.get(`/api/v2/agents/${owner.agentId}/tests/${id}`, { apiKey: owner.key })
    expect(read.status).toBe(200)
    expect(read.body.data).toMatchObject({ id, agent_id: owner.agentId, ...eagerCase })

    const minimal = await addCase(owner, { name: "Minimal", persona: "Someone" })
    const listed = await api.get(`/api/v2/agents/${owner.agentId}/tests?page_size=1`, { apiKey: owner.key })
    expect(listed.body.pagination).toEqual({ page: 1, page_size: 1, total_items: 2, total_pages: 2 })
    expect(listed.body.data.map((item: any) => item.id)).toEqual([id])

    const changed = await api.put(`/api/v2/agents/${owner.agentId}/tests/${minimal}`, { max_turns: 3 }, {
      apiKey: owner.key
    })
    expect(changed.status).toBe(200)
    expect(changed.body.data).toMatchObject({ name: "Minimal", max_turns: 3, variables: {}, expectations: {} })

    const removed = await api.delete(`/api/v2/agents/${owner.agentId}/tests/${minimal}`, { apiKey: owner.key })
    expect(removed.status).toBe(200)
    const gone = await api.get(`/api/v2/agents/${owner.agentId}/tests/${minimal}`, { apiKey: owner.key })
    expect(gone.status).toBe(404)
    expect(gone.body.error.code).toBe("not_found")
  })

  it("refuses bad cases with the field at fault", async () => {
    const owner = await agent("tests-bad")
    const noPersona = await api.post(`/api/v2/agents/${owner.agentId}/tests`, { name: "x" }, { apiKey: owner.key })
    expect(noPersona.status).toBe(422)
    expect(noPersona.body.error.code).toBe("validation_error")
    const badPattern = await api.post(`/api/v2/agents/${owner.agentId}/tests`, {
      name: "x",
      persona: "y",
      expectations: { variables: [{ name: "budget", pattern: "([" }] }
    }, { apiKey: owner.key })
    expect(badPattern.status).toBe(422)
    expect(JSON.stringify(badPattern.body)).toContain("not a valid regular expression")
    const listed = await api.get(`/api/v2/agents/${owner.agentId}/tests`, { apiKey: owner.key })
    expect(listed.body.data).toEqual([])
  })

  it("keeps cases and runs to their organization and needs the tests scopes", async () => {
    const owner = await agent("tests-owner")
    const stranger = await agent("tests-stranger")
    const id = await addCase(owner, eagerCase)
    const base = `/api/v2/agents/${owner.agentId}`
    expect((await api.get(`${base}/tests`, { apiKey: stranger.key })).status).toBe(404)
    expect((await api.get(`${base}/tests/${id}`, { apiKey: stranger.key })).status).toBe(404)
    expect((await api.put(`${base}/tests/${id}`, { name: "mine" }, { apiKey: stranger.key })).status).toBe(404)
    expect((await api.delete(`${base}/tests/${id}`, { apiKey: stranger.key })).status).toBe(404)
    expect((await api.post(`${base}/test-runs`, {}, { apiKey: stranger.key })).status).toBe(404)
    expect((await api.get(`${base}/test-runs`, { apiKey: stranger.key })).status).toBe(404)
    // The stranger's own agent cannot reach the owner's case either.
    expect((await api.get(`/api/v2/agents/${stranger.agentId}/tests/${id}`, { apiKey: stranger.key })).status).toBe(
      404
    )
    const run = await api.post(`${base}/test-runs`, { test_ids: [id] }, { apiKey: owner.key })
    expect(run.status).toBe(202)
    expect((await api.get(`${base}/test-runs/${run.body.data.id}`, { apiKey: stranger.key })).status).toBe(404)
    await finished(owner, run.body.data.id)

    const readOnly = await newApiKey(api, owner.account, ["tests:read"])
    expect((await api.get(`${base}/tests/${id}`, { apiKey: readOnly })).status).toBe(200)
    const refused = await api.post(`${base}/tests`, eagerCase, { apiKey: readOnly })
    expect(refused.status).toBe(403)
    expect(refused.body.error.message).toContain("tests:write")
    expect((await api.post(`${base}/test-runs`, {}, { apiKey: readOnly })).status).toBe(403)
    const agentsOnly = await newApiKey(api, owner.account, ["agents:read", "agents:write"])
    expect((await api.get(`${base}/tests`, { apiKey: agentsOnly })).status).toBe(403)
    expect((await api.get(`${base}/tests`, { token: owner.account.token })).status).toBe(401)
  })
})

describe("agent test runs", () => {
  it("plays each case against the agent: one passes, one fails for a stated reason, with pass rates over repetitions", async () => {
    const owner = await agent("tests-run")
    const eager = await addCase(owner, eagerCase)
    const refuser = await addCase(owner, refuserCase)
    const judgeRequestsBefore =
      llm.requests.filter((request) => request.body?.response_format?.json_schema?.name === "agent_test_judgement")
        .length

    const started = await api.post(`/api/v2/agents/${owner.agentId}/test-runs`, { repetitions: 2, concurrency: 3 }, {
      apiKey: owner.key
    })
    expect(started.status).toBe(202)
    expect(started.body.data).toMatchObject({ status: "queued", version: "published", test_ids: [eager, refuser] })
    const run = await finished(owner, started.body.data.id)

    expect(run.status).toBe("completed")
    expect(run.passed).toBe(false)
    expect(run.pass_rate).toBe(0.5)
    const [eagerResult, refuserResult] = run.cases
    expect(eagerResult).toMatchObject({ test_id: eager, completed: 2, passed: 2, pass_rate: 1 })
    expect(refuserResult).toMatchObject({ test_id: refuser, completed: 2, passed: 0, pass_rate: 0 })

    const conversation = eagerResult.conversations[0]
    expect(conversation).toMatchObject({
      passed: true,
      caller_turns: 2,
      end_reason: "end_node_reached",
      disposition: "QUALIFIED",
      nodes_visited: ["start", "qualify", "end"],
      failed_expectations: [],
      error: null
    })
    expect(conversation.transcript.map((turn: any) => turn.text)).toEqual([
      "Hi Ada, this is Acme!",
      "Yes, tell me more",
      "What budget do you have in mind?",
      "About 5000 dollars, and I decide",
      "Thanks, goodbye!"
    ])
    const failure = refuserResult.conversations[0]
    expect(failure.passed).toBe(false)
    expect(failure.nodes_visited).toEqual(["start"])
    expect(failure.failed_expectations).toEqual([
      { expectation: "nodes_visited", reason: "node \"qualify\" was not visited (path: start)" }
    ])
    // The judge grades only conversations the rules passed: the two eager ones.
    const judgeRequests =
      llm.requests.filter((request) => request.body?.response_format?.json_schema?.name === "agent_test_judgement")
        .length
    expect(judgeRequests - judgeRequestsBefore).toBeGreaterThanOrEqual(2)

    // Each conversation is a run of the agent, recorded as a test chat with the simulator's tokens billed to it.
    const conversationKey = await newApiKey(api, owner.account, ["conversations:read"])
    const recorded = await api.get(`/api/v2/conversations/${conversation.conversation_id}`, { apiKey: conversationKey })
    expect(recorded.body.data).toMatchObject({ channel: "chat", mode: "testchat", status: "completed" })
    expect(recorded.body.data.usage.service_tokens).toBe(
      recorded.body.data.usage.prompt_tokens + recorded.body.data.usage.completion_tokens
    )
    expect(recorded.body.data.usage.service_tokens).toBeGreaterThan(0)

    const listed = await api.get(`/api/v2/agents/${owner.agentId}/test-runs`, { apiKey: owner.key })
    expect(listed.body.data.map((item: any) => item.id)).toEqual([run.id])

    // Usage tells test conversations from real ones.
    const chat = await api.post(`/api/v1/workflow/${owner.agentId}/text-chat/sessions`, {}, {
      token: owner.account.token
    })
    const testRunIds = run.cases.flatMap((result: any) => result.conversations.map((item: any) => item.conversation_id))
    const usageOf = async (status: string) => {
      const filters = JSON.stringify([{ attribute: "testRuns", type: "radio", value: { status } }])
      const reply = await api.get(`/api/v1/organizations/usage/runs?limit=100&filters=${encodeURIComponent(filters)}`, {
        token: owner.account.token
      })
      expect(reply.status).toBe(200)
      return reply.body.runs.map((item: any) => item.id).sort((a: number, b: number) => a - b)
    }
    expect(await usageOf("only")).toEqual([...testRunIds].sort((a, b) => a - b))
    expect(await usageOf("exclude")).toEqual([chat.body.workflow_run_id])
  })

  it("fails a case whose judge criterion fails, with the judge's reason", async () => {
    const owner = await agent("tests-judge")
    const id = await addCase(owner, {
      ...refuserCase,
      name: "Refuser hears the pitch",
      expectations: { nodes_not_visited: ["qualify"], criteria: ["The agent asks about the caller's budget"] }
    })
    const started = await api.post(`/api/v2/agents/${owner.agentId}/test-runs`, { test_ids: [id] }, {
      apiKey: owner.key
    })
    const run = await finished(owner, started.body.data.id)
    expect(run.cases[0].conversations[0].failed_expectations).toEqual([
      {
        expectation: "criteria",
        reason: "\"The agent asks about the caller's budget\": The agent never asked about the budget."
      }
    ])
    expect(run.passed).toBe(false)
  })

  it("compares the published version with a draft case by case", async () => {
    const owner = await agent("tests-compare")
    const eager = await addCase(owner, eagerCase)
    const definition = salesDefinition()
    definition.nodes[0]!.data.prompt = "NEVER_QUALIFY: end the call politely."
    const draft = await api.put(`/api/v1/workflow/${owner.agentId}`, { workflow_definition: definition }, {
      token: owner.account.token
    })
    expect(draft.status).toBe(200)

    const started = await api.post(
      `/api/v2/agents/${owner.agentId}/test-runs`,
      { version: "draft", compare_with: "published", repetitions: 2 },
      { apiKey: owner.key }
    )
    const run = await finished(owner, started.body.data.id)
    expect(run.comparison).toEqual([
      { test_id: eager, name: eagerCase.name, pass_rate: 0, compare_pass_rate: 1, change: -1 }
    ])
    const draftResult = run.cases.find((result: any) => result.version === "draft")
    expect(draftResult.conversations[0].failed_expectations[0]).toEqual({
      expectation: "nodes_visited",
      reason: "node \"qualify\" was not visited (path: start)"
    })
    expect(run.passed).toBe(false)
  })

  it("refuses runs of unknown cases, of agents without cases, and too many conversations", async () => {
    const owner = await agent("tests-run-bad")
    const none = await api.post(`/api/v2/agents/${owner.agentId}/test-runs`, {}, { apiKey: owner.key })
    expect(none.status).toBe(422)
    expect(none.body.error.message).toContain("no test cases")
    const id = await addCase(owner, eagerCase)
    const unknown = await api.post(`/api/v2/agents/${owner.agentId}/test-runs`, { test_ids: [id, 999999] }, {
      apiKey: owner.key
    })
    expect(unknown.status).toBe(422)
    expect(unknown.body.error.message).toContain("999999")
    const tooMany = await api.post(`/api/v2/agents/${owner.agentId}/test-runs`, { repetitions: 21 }, {
      apiKey: owner.key
    })
    expect(tooMany.status).toBe(422)
  })

  it("fails a run whose server stopped holding it, so a poll does not wait forever", async () => {
    const owner = await agent("tests-abandoned")
    const id = await addCase(owner, eagerCase)
    // A run as a process that died mid-run leaves it: running, its last heartbeat minutes old.
    const runId = await server.run(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const rows = yield* sql<{ id: number }>`
          INSERT INTO agent_test_runs (organization_id, workflow_id, state, request, created_at, started_at, heartbeat_at)
          VALUES (${owner.account.organizationId}, ${owner.agentId}, 'running', ${
          JSON.stringify({
            version: "published",
            compare_with: null,
            repetitions: 1,
            concurrency: 1,
            pass_threshold: 1,
            cases: [{ ...eagerCase, id, agent_id: owner.agentId, created_at: new Date(), updated_at: new Date() }]
          })
        }::jsonb, now(), now(), now() - interval '5 minutes')
          RETURNING id`
        return Number(rows[0]!.id)
      })
    )
    const run = await finished(owner, runId)
    expect(run).toMatchObject({
      status: "failed",
      passed: null,
      error: "The server holding this test run stopped before it finished; start it again"
    })
    expect(run.cases[0]).toMatchObject({ test_id: id, completed: 0, pass_rate: null })
  })

  it("proposes a case for every transition of the agent's graph, which can be added as they are", async () => {
    const owner = await agent("propose")
    const proposed = await api.post(`/api/v2/agents/${owner.agentId}/tests/generate`, undefined, { apiKey: owner.key })
    expect(proposed.status).toBe(200)
    const cases = proposed.body.data as ReadonlyArray<any>
    // Start → Qualify, then Qualify → End: the second case's caller meets both conditions, in order.
    expect(cases.map((proposal) => proposal.expectations.nodes_visited)).toEqual([
      ["start", "qualify"],
      ["start", "qualify", "end"]
    ])
    expect(cases[1].persona).toMatch(/1\. .*The caller wants to hear more[\s\S]*2\. .*The budget is known/)
    expect(cases[1].name).toContain("Budget known / done")
    // The variables the prompts need (those without a default, unlike first_name) get sample values.
    expect(cases[0].variables).toEqual({ company: "Sample company", product: "Sample product" })
    for (const proposal of cases) await addCase(owner, proposal)
    const listed = await api.get(`/api/v2/agents/${owner.agentId}/tests`, { apiKey: owner.key })
    expect(listed.body.data).toHaveLength(2)

    // Another organization's agent is not found; a reader without tests:read is refused.
    const stranger = await agent("propose-other")
    expect(
      (await api.post(`/api/v2/agents/${owner.agentId}/tests/generate`, undefined, { apiKey: stranger.key })).status
    ).toBe(404)
    const noScope = await newApiKey(api, owner.account, ["agents:read"])
    expect(
      (await api.post(`/api/v2/agents/${owner.agentId}/tests/generate`, undefined, { apiKey: noScope })).status
    ).toBe(403)
  })
})
