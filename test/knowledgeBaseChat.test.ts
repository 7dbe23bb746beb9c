import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import { PDF_TYPE, SSO_PAGE, twoHundredPagePdf, untilIndexed, uploadDocument } from "./support/knowledgeDocuments.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let owner: TestAccount
let pdfUuid: string

beforeAll(async () => {
  llm = await startScriptedLlm()
  server = await startServer({}, { ownDatabase: true })
  api = client(server.url)
  owner = await newAccount(api, "kb-chat")
  const uploaded = await uploadDocument(api, { token: owner.token }, "plans.pdf", PDF_TYPE, await twoHundredPagePdf())
  pdfUuid = (await untilIndexed(api, { token: owner.token }, uploaded.document_uuid)).document_uuid
})

afterAll(async () => {
  await server?.close()
  await llm?.close()
})

beforeEach(() => llm.reset())

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

const plansAgent = (documentUuids: ReadonlyArray<string>) => ({
  nodes: [
    node("start", "startCall", {
      name: "Start",
      greeting: "Hello, how can I help?",
      prompt: "Answer about plans."
    }),
    node("end", "endCall", { name: "End", prompt: "Say goodbye." }),
    node("global", "globalNode", { name: "Global", prompt: "Be brief.", document_uuids: documentUuids })
  ],
  edges: [{ id: "e1", source: "start", target: "end", data: { label: "Done", condition: "The caller is done" } }]
})

const createAgent = (account: TestAccount, documentUuids: ReadonlyArray<string>) =>
  api.post("/api/v1/workflow/create/definition", {
    name: "Plans agent",
    workflow_definition: plansAgent(documentUuids)
  }, { token: account.token })

const agentWith = async (account: TestAccount, documentUuids: ReadonlyArray<string>) => {
  const created = await createAgent(account, documentUuids)
  expect(created.status).toBe(200)
  return created.body.id as number
}

const chat = async (account: TestAccount, workflowId: number) => {
  const session = await api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions`, {}, { token: account.token })
  expect(session.status).toBe(200)
  const runId = session.body.workflow_run_id as number
  return (text: string) =>
    api.post(`/api/v1/workflow/${workflowId}/text-chat/sessions/${runId}/messages`, { text }, { token: account.token })
}

describe("knowledge bases in a conversation", () => {
  it("lets the model call search_knowledge_base and records the document and page its answer came from", async () => {
    await useLlm(api, owner, llm.baseUrl)
    const say = await chat(owner, await agentWith(owner, [pdfUuid]))
    llm.enqueue(
      reply.toolCalls([{ name: "search_knowledge_base", arguments: { query: "premium plan SSO" }, id: "call_kb" }]),
      reply.content("Yes, the premium plan includes single sign-on with Okta and Azure AD.")
    )
    const answered = await say("Does the premium plan include SSO?")
    expect(answered.status).toBe(200)
    expect(answered.body.reply).toContain("single sign-on")

    const offered = llm.requests[0]!.body.tools.map((tool: any) => tool.function)
    const searchTool = offered.find((tool: any) => tool.name === "search_knowledge_base")
    expect(searchTool.parameters.required).toEqual(["query"])

    const toolMessage = llm.requests[1]!.body.messages.find((message: any) => message.role === "tool")
    expect(toolMessage.tool_call_id).toBe("call_kb")
    expect(toolMessage.content).toContain(`plans.pdf, page ${SSO_PAGE}`)
    expect(toolMessage.content).toContain("The premium plan includes single sign-on")

    const call = (answered.body.transcript as Array<any>).find((turn) => turn.tool_calls).tool_calls[0]
    expect(call).toMatchObject({ name: "search_knowledge_base", status: "success", latency_ms: expect.any(Number) })
    expect(call.sources[0]).toMatchObject({ document_uuid: pdfUuid, filename: "plans.pdf", page: SSO_PAGE })
  })

  it("never retrieves another organization's documents for an agent that names them", async () => {
    const other = await newAccount(api, "kb-other")
    await useLlm(api, other, llm.baseUrl)
    // Saving such an agent is refused; one stored in the database anyway still never reaches the documents.
    const refused = await createAgent(other, [pdfUuid])
    expect(refused.status).toBe(422)
    expect(refused.body.detail[0].type).toBe("document_unknown")
    const workflowId = await agentWith(other, [])
    await server.run(
      Effect.flatMap(
        SqlClient.SqlClient,
        (sql) =>
          sql`UPDATE workflow_definitions SET workflow_definition = ${
            JSON.stringify(plansAgent([pdfUuid]))
          }::jsonb WHERE workflow_id = ${workflowId}`
      )
    )
    const say = await chat(other, workflowId)
    llm.enqueue(
      reply.toolCalls([{ name: "search_knowledge_base", arguments: { query: "premium plan SSO" }, id: "call_kb" }]),
      reply.content("I could not find that.")
    )
    const answered = await say("Does the premium plan include SSO?")
    expect(answered.status).toBe(200)
    const call = (answered.body.transcript as Array<any>).find((turn) => turn.tool_calls).tool_calls[0]
    expect(call.sources).toEqual([])
    expect(call.result).toBe("No passage of the knowledge base matches this query.")
  })
})
