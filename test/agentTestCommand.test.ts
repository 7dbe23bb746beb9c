import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { createWorkflow, salesDefinition, useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { spawnTalkgraph } from "./support/process.ts"
import { salesRolePlay } from "./support/salesRolePlay.ts"
import { type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let dir: string

beforeAll(async () => {
  llm = await startScriptedLlm({ answer: salesRolePlay })
  server = await startServer()
  api = client(server.url)
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-test-cli-"))
})

afterAll(async () => {
  await server?.close()
  await llm?.close()
  await fs.rm(dir, { recursive: true, force: true })
})

const talkgraphTest = async (args: ReadonlyArray<string>, env: Record<string, string>) => {
  const proc = spawnTalkgraph(["test", ...args], env)
  const code = await proc.exited
  return { code, output: proc.output().trim() }
}

const agentWithSuite = async () => {
  const account = await newAccount(api, "tests-cli")
  await useLlm(api, account, llm.baseUrl)
  const agentId = await createWorkflow(api, server, account, salesDefinition(), {
    templateContextVariables: { company: "Acme", product: "widgets" },
    dispositionCodes: ["QUALIFIED", "NOT_INTERESTED"]
  })
  const key = await newApiKey(api, account, ["tests:read", "tests:write", "agents:read"])
  for (
    const body of [
      {
        name: "Eager buyer qualifies",
        persona: "EAGER: wants widgets",
        variables: { first_name: "Ada" },
        expectations: { nodes_visited: ["qualify", "end"], disposition: ["QUALIFIED"] }
      },
      {
        name: "Refuser <reaches> qualify",
        persona: "REFUSER: not interested",
        expectations: { nodes_visited: ["qualify"] }
      }
    ]
  ) {
    const created = await api.post(`/api/v2/agents/${agentId}/tests`, body, { apiKey: key })
    expect(created.status).toBe(201)
  }
  return { agentId, key }
}

describe("talkgraph test", () => {
  it(
    "passes with exit 0 and a JUnit file when the chosen cases pass, and fails with exit 1 naming why otherwise",
    async () => {
      const { agentId, key } = await agentWithSuite()
      const env = { TALKGRAPH_URL: server.url, TALKGRAPH_API_KEY: key }

      const passingFile = path.join(dir, "passing.xml")
      const passing = await talkgraphTest(
        ["Chat agent", "--suite", "Eager buyer qualifies", "--junit", passingFile],
        env
      )
      expect(passing.output).toContain("PASS Eager buyer qualifies: 1/1 (100%)")
      expect(passing.code).toBe(0)
      const passingXml = await fs.readFile(passingFile, "utf8")
      expect(passingXml).toContain(`<testsuites name="talkgraph agent tests" tests="1" failures="0">`)
      expect(passingXml).toContain(`<testcase classname="Chat agent" name="Eager buyer qualifies"></testcase>`)

      const failingFile = path.join(dir, "failing.xml")
      const failing = await talkgraphTest([String(agentId), "--repetitions", "2", "--junit", failingFile], env)
      expect(failing.code).toBe(1)
      expect(failing.output).toContain("FAIL Refuser <reaches> qualify: 0/2 (0%)")
      expect(failing.output).toContain("#1 nodes_visited: node \"qualify\" was not visited (path: start)")
      expect(failing.output).toContain("some cases did not pass")
      const failingXml = await fs.readFile(failingFile, "utf8")
      expect(failingXml).toContain(`tests="2" failures="1"`)
      expect(failingXml).toContain(`name="Refuser &lt;reaches&gt; qualify">`)
      expect(failingXml).toContain(`<failure message="pass rate 0% (0/2), needs 100%" type="expectations">`)
      expect(failingXml).toContain("nodes_visited: node &quot;qualify&quot; was not visited (path: start)")
    },
    240_000
  )

  it("refuses bad arguments, an unknown case and a wrong key in one clear line", async () => {
    const { agentId, key } = await agentWithSuite()
    const env = { TALKGRAPH_URL: server.url, TALKGRAPH_API_KEY: key }
    const badFlags = await talkgraphTest([String(agentId), "--repetitions", "0", "--version", "latest"], env)
    expect(badFlags.code).toBe(1)
    expect(badFlags.output).toContain(
      "talkgraph: --repetitions must be a whole number from 1 to 20; --version must be draft or published"
    )
    const badVoice = await talkgraphTest([String(agentId), "--mode", "video", "--voice-speed", "20"], env)
    expect(badVoice.code).toBe(1)
    expect(badVoice.output).toContain(
      "talkgraph: --mode must be text or voice; --voice-speed must be a number from 1 to 10; --voice-speed goes with --mode voice"
    )
    const unknown = await talkgraphTest([String(agentId), "--suite", "Nope"], env)
    expect(unknown.code).toBe(1)
    expect(unknown.output).toBe(`talkgraph: the agent has no test case "Nope"`)
    const wrongKey = await talkgraphTest([String(agentId)], { ...env, TALKGRAPH_API_KEY: "tg_wrong" })
    expect(wrongKey.code).toBe(1)
    expect(wrongKey.output).toMatch(/^talkgraph: GET \/api\/v2\/agents\/\d+ answered 401/)
  }, 240_000)
})
