import { describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { createWorkflow, useLlm } from "./support/chatFixtures.ts"
import { phoneCallsForTests } from "./support/phoneCalls.ts"
import { reply } from "./support/scriptedLlm.ts"

// The agent's add_to_do_not_call tool: a callee who asks not to be called again is put on the
// organization's do-not-call list, on a phone call through the Twilio stand-in; a text chat has no
// number to add; a workflow that does not turn the tool on does not offer it.

const TOOL = "add_to_do_not_call"
const GREETING = "Hello, this is Acme. Press 1 if you do not want our calls."
const ANSWER = "Understood, we will not call you again."

const offered = (request: any): ReadonlyArray<string> =>
  (request.tools ?? []).map((tool: any) => tool.function?.name as string)

/**
 * The caller asks to stop (the keypad's 1 on a call, the words in a chat): the model lists the
 * number, then (asked twice, to prove a second listing changes nothing) answers.
 */
const stopModel = (request: any) => {
  const messages: ReadonlyArray<any> = request.messages ?? []
  const asked = messages.some((message) =>
    message.role === "user" &&
    (message.content === "The caller pressed 1 on the keypad." || message.content === "Please stop calling me.")
  )
  if (!asked || !offered(request).includes(TOOL)) return reply.content("How can I help?")
  const results = messages.filter((message) => message.role === "tool").length
  if (results < 2) {
    return reply.toolCalls([{ name: TOOL, arguments: { reason: "  asked to stop calling  " }, id: `dnc_${results}` }])
  }
  return reply.content(ANSWER)
}

const phone = phoneCallsForTests(stopModel)
const { query } = phone

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

const definition = (start: Record<string, unknown> = {}) => ({
  nodes: [
    node("start", "startCall", { name: "Start", greeting: GREETING, prompt: "Offer our services.", ...start }),
    node("end", "endCall", { name: "End", prompt: "Say goodbye." })
  ],
  edges: [{ id: "e1", source: "start", target: "end", data: { label: "Finish", condition: "The caller is done" } }]
})

const listed = async (account: TestAccount, number: string) => {
  const found = await phone.api.get(`/api/v1/organizations/dnc?search=${number.slice(1)}`, { token: account.token })
  expect(found.status).toBe(200)
  return found.body.numbers as ReadonlyArray<Record<string, unknown>>
}

const chatWith = async (account: TestAccount, workflowId: number) => {
  const session = await phone.api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions`, {}, {
    token: account.token
  })
  expect(session.status).toBe(200)
  const runId = session.body.workflow_run_id as number
  return {
    runId,
    say: (text: string) =>
      phone.api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions/${runId}/messages`, { text }, {
        token: account.token
      })
  }
}

describe("the add_to_do_not_call agent tool", () => {
  it(
    "puts the callee's number on the run's organization's list when they ask on a phone call, once, with the model's reason, recorded in the transcript",
    async () => {
      const to = "+14155550451"
      // Another organization lists the same number on its own: its entry is its own and stays so.
      const other = await newAccount(phone.api)
      const elsewhere = await phone.api.post("/api/v1/organizations/dnc", { phone_number: to, reason: "by letter" }, {
        token: other.token
      })
      expect(elsewhere.status).toBe(200)

      const account = await newAccount(phone.api)
      await phone.equip(account)
      const workflowId = await createWorkflow(
        phone.api,
        phone.server,
        account,
        definition({ collect_digits: { max_digits: 1 } }),
        {
          configurations: { do_not_call_tool: true }
        }
      )
      expect(await listed(account, to)).toEqual([])
      const run = await phone.call(account, workflowId, to, [
        { waitForAgent: { quietMs: 600 } },
        { dtmf: "1" },
        { waitForAgent: { quietMs: 1200 } },
        { hangUp: true }
      ])
      expect(run.callee.protocolErrors).toEqual([])

      expect(await listed(account, to)).toMatchObject([
        { phone_number: to, source: "agent_tool", reason: "asked to stop calling" }
      ])
      expect(await listed(other, to)).toMatchObject([{ phone_number: to, source: "api", reason: "by letter" }])

      // Both calls are in the transcript; the second found the number listed already.
      const calls = run.transcript.flatMap((turn) => turn.tool_calls ?? [])
      expect(calls).toMatchObject([
        { name: TOOL, tool_uuid: TOOL, status: "success", result: "{\"listed\":true,\"already_listed\":false}" },
        { name: TOOL, tool_uuid: TOOL, status: "success", result: "{\"listed\":true,\"already_listed\":true}" }
      ])
      expect(run.transcript.at(-1)).toMatchObject({ role: "assistant", text: ANSWER })
      const dncRows = await query<{ count: number }>((sql) =>
        sql`SELECT count(*)::int AS count FROM do_not_call_numbers WHERE phone_number = ${to}`
      )
      expect(dncRows[0]!.count).toBe(2)

      // The number is now refused for a new call.
      const key = await newApiKey(phone.api, account, ["calls:write"])
      const again = await phone.api.post("/api/v2/calls", { agent_id: workflowId, phone_number: to }, { apiKey: key })
      expect(again.status).toBe(409)
    },
    90_000
  )

  it("tells the model a text chat has no number to list, and adds nothing", async () => {
    const account = await newAccount(phone.api)
    await useLlm(phone.api, account, phone.llm.baseUrl)
    const workflowId = await createWorkflow(phone.api, phone.server, account, definition(), {
      configurations: { do_not_call_tool: true }
    })
    const { runId, say } = await chatWith(account, workflowId)
    const answered = await say("Please stop calling me.")
    expect(answered.status).toBe(200)
    expect(answered.body.reply).toBe(ANSWER)
    const [row] = await query<{ transcript: ReadonlyArray<any> }>((sql) =>
      sql`SELECT transcript FROM runs WHERE id = ${runId}`
    )
    const calls = row!.transcript.flatMap((turn) => turn.tool_calls ?? [])
    expect(calls).toHaveLength(2)
    for (const call of calls) {
      expect(call).toMatchObject({ name: TOOL, status: "error" })
      expect(call.result).toContain("not a phone call")
    }
    const all = await phone.api.get("/api/v1/organizations/dnc", { token: account.token })
    expect(all.body.total_count).toBe(0)
  })

  it("is not offered to a workflow that does not turn it on, and the setting and its name are checked", async () => {
    const account = await newAccount(phone.api)
    await useLlm(phone.api, account, phone.llm.baseUrl)
    const workflowId = await createWorkflow(phone.api, phone.server, account, definition())
    const { say } = await chatWith(account, workflowId)
    const before = phone.llm.requests.length
    const answered = await say("Please stop calling me.")
    expect(answered.body.reply).toBe("How can I help?")
    const asked = phone.llm.requests.slice(before).map((request) => offered(request.body))
    expect(asked.length).toBeGreaterThan(0)
    for (const names of asked) expect(names).not.toContain(TOOL)

    const wrong = await phone.api.post("/api/v1/workflow/create/definition", {
      name: "Wrong setting",
      workflow_definition: definition(),
      workflow_configurations: { do_not_call_tool: "yes" }
    }, { token: account.token })
    expect(wrong.status).toBe(422)
    expect(wrong.body.detail[0].loc).toEqual(["body", "workflow_configurations", "do_not_call_tool"])

    const taken = definition()
    taken.edges[0]!.data.label = "Add to do not call"
    const clash = await phone.api.post("/api/v1/workflow/create/definition", {
      name: "Clashing edge",
      workflow_definition: taken
    }, { token: account.token })
    expect(clash.status).toBe(422)
    expect(JSON.stringify(clash.body)).toContain("reserved")
  })
})
