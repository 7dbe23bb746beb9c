import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { createWorkflow, salesDefinition, useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { spawnTalkgraph } from "./support/process.ts"
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
  persona: "EAGER: a small-business owner who wants widgets.",
  variables: { first_name: "Ada" },
  max_turns: 4,
  expectations: { nodes_visited: ["qualify", "end"], disposition: ["QUALIFIED"] }
}

const refuserCase = {
  name: "Refuser reaches qualify",
  persona: "REFUSER: busy, not interested.",
  max_turns: 4,
  expectations: { nodes_visited: ["qualify"] }
}

interface GatedAgent {
  readonly account: TestAccount
  readonly agentId: number
  readonly key: string
}

const gatedAgent = async (label: string): Promise<GatedAgent> => {
  const account = await newAccount(api, label)
  await useLlm(api, account, llm.baseUrl)
  const agentId = await createWorkflow(api, server, account, salesDefinition(), {
    templateContextVariables: { company: "Acme", product: "widgets" },
    configurations: { publish_requires_tests: true },
    dispositionCodes: ["QUALIFIED", "NOT_INTERESTED"]
  })
  const key = await newApiKey(api, account, ["tests:read", "tests:write", "agents:read", "agents:write"])
  return { account, agentId, key }
}

const editDraft = async ({ account, agentId }: GatedAgent, company: string) => {
  const edited = await api.put(`/api/v1/workflow/${agentId}`, {
    template_context_variables: { company, product: "widgets" }
  }, { token: account.token })
  expect(edited.status).toBe(200)
}

const publish = ({ account, agentId }: GatedAgent) =>
  api.post(`/api/v1/workflow/${agentId}/publish`, undefined, { token: account.token })

const addCase = async ({ agentId, key }: GatedAgent, body: unknown) => {
  const created = await api.post(`/api/v2/agents/${agentId}/tests`, body, { apiKey: key })
  expect(created.status).toBe(201)
  return created.body.data.id as number
}

const runOnDraft = async ({ agentId, key }: GatedAgent) => {
  const started = await api.post(`/api/v2/agents/${agentId}/test-runs`, { version: "draft" }, { apiKey: key })
  expect(started.status).toBe(202)
  const runId: number = started.body.data.id
  const deadline = Date.now() + 30_000
  for (;;) {
    const read = await api.get(`/api/v2/agents/${agentId}/test-runs/${runId}`, { apiKey: key })
    if (read.body.data.status === "completed" || read.body.data.status === "failed") return read.body.data
    if (Date.now() > deadline) throw new Error(`test run ${runId} still ${read.body.data.status}`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const publishedCompany = async ({ account, agentId }: GatedAgent) => {
  const versions = await api.get(`/api/v1/workflow/${agentId}/versions`, { token: account.token })
  expect(versions.status).toBe(200)
  const published = versions.body.find((version: any) => version.version_status === "published")
  return published.template_context_variables.company as string
}

describe("publish_requires_tests", () => {
  it("is refused unless it is true or false", async () => {
    const account = await newAccount(api, "gate-setting")
    const created = await api.post("/api/v1/workflow/create/definition", {
      name: "Gated",
      workflow_definition: salesDefinition(),
      workflow_configurations: { publish_requires_tests: "yes" }
    }, { token: account.token })
    expect(created.status).toBe(422)
    expect(JSON.stringify(created.body)).toContain("publish_requires_tests")
    expect(JSON.stringify(created.body)).toContain("must be true or false")
  })

  it("publishes a draft only after a run on that draft passed every current case", async () => {
    const agent = await gatedAgent("gate-flow")
    await editDraft(agent, "Acme Two")

    const noCases = await publish(agent)
    expect(noCases.status).toBe(409)
    expect(noCases.body.detail).toContain("has no test cases")

    await addCase(agent, eagerCase)
    const noRun = await publish(agent)
    expect(noRun.status).toBe(409)
    expect(noRun.body.detail).toContain("no test run on the draft yet")

    const passing = await runOnDraft(agent)
    expect(passing.passed).toBe(true)

    await editDraft(agent, "Acme Three")
    const stale = await publish(agent)
    expect(stale.status).toBe(409)
    expect(stale.body.detail).toContain(`the draft changed after test run ${passing.id} started`)
    expect(await publishedCompany(agent)).toBe("Acme")

    const again = await runOnDraft(agent)
    expect(again.passed).toBe(true)
    const refuserId = await addCase(agent, refuserCase)
    const newCase = await publish(agent)
    expect(newCase.status).toBe(409)
    expect(newCase.body.detail).toContain(`"Refuser reaches qualify" were added or changed after test run`)

    const failing = await runOnDraft(agent)
    expect(failing.passed).toBe(false)
    const refused = await publish(agent)
    expect(refused.status).toBe(409)
    expect(refused.body.detail).toContain(`test run ${failing.id} did not pass every case`)
    expect(await publishedCompany(agent)).toBe("Acme")

    const removed = await api.delete(`/api/v2/agents/${agent.agentId}/tests/${refuserId}`, { apiKey: agent.key })
    expect(removed.status).toBe(200)
    expect((await runOnDraft(agent)).passed).toBe(true)
    const published = await publish(agent)
    expect(published.status).toBe(200)
    expect(await publishedCompany(agent)).toBe("Acme Three")
  }, 120_000)

  it("`talkgraph test --publish` publishes the draft when its suite passes and leaves it when not", async () => {
    const agent = await gatedAgent("gate-cli")
    await addCase(agent, eagerCase)
    await editDraft(agent, "Acme CLI")
    const env = { TALKGRAPH_URL: server.url, TALKGRAPH_API_KEY: agent.key }

    const proc = spawnTalkgraph(["test", String(agent.agentId), "--publish"], env)
    expect(await proc.exited).toBe(0)
    expect(proc.output()).toContain("PASS Eager buyer qualifies: 1/1 (100%)")
    expect(proc.output()).toMatch(/Published version \d+ of agent "Chat agent"/)
    expect(await publishedCompany(agent)).toBe("Acme CLI")

    await addCase(agent, refuserCase)
    await editDraft(agent, "Acme Broken")
    const failing = spawnTalkgraph(["test", String(agent.agentId), "--publish"], env)
    expect(await failing.exited).toBe(1)
    expect(failing.output()).toContain("some cases did not pass")
    expect(await publishedCompany(agent)).toBe("Acme CLI")

    const wrong = spawnTalkgraph(["test", String(agent.agentId), "--publish", "--version", "published"], env)
    expect(await wrong.exited).toBe(1)
    expect(wrong.output()).toContain("--publish tests and publishes the draft; leave out --version published")
  }, 180_000)
})
