import * as crypto from "node:crypto"
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { useLlm } from "./support/chatFixtures.ts"
import { type Client, client } from "./support/client.ts"
import {
  DOCX_TYPE,
  PDF_TYPE,
  shopDocx,
  SSO_PAGE,
  twoHundredPagePdf,
  untilIndexed,
  uploadDocument
} from "./support/knowledgeDocuments.ts"
import { reply, type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

// Knowledge retrieval per node: `knowledge_retrieval: "auto"` searches the node's documents with
// each caller message and hands the passages to the model; `tool` (the default) offers
// search_knowledge_base. Graph validation names unknown documents and unusable settings.

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let slowEmbeddings: ScriptedLlm
let owner: TestAccount
let pdfUuid: string
let docxUuid: string

beforeAll(async () => {
  ;[llm, slowEmbeddings] = await Promise.all([
    startScriptedLlm(),
    startScriptedLlm({ embeddingsDelayMs: 4000 })
  ])
  server = await startServer({}, { ownDatabase: true })
  api = client(server.url)
  owner = await newAccount(api, "kb-auto")
  const credentials = { token: owner.token }
  const [pdf, docx] = await Promise.all([
    uploadDocument(api, credentials, "plans.pdf", PDF_TYPE, await twoHundredPagePdf()),
    uploadDocument(api, credentials, "handbook.docx", DOCX_TYPE, await shopDocx())
  ])
  pdfUuid = (await untilIndexed(api, credentials, pdf.document_uuid)).document_uuid
  docxUuid = (await untilIndexed(api, credentials, docx.document_uuid)).document_uuid
  await useLlm(api, owner, llm.baseUrl)
}, 120_000)

afterAll(async () => {
  await server?.close()
  await Promise.all([llm?.close(), slowEmbeddings?.close()])
})

beforeEach(() => llm.reset())

const node = (id: string, type: string, data: Record<string, unknown>) => ({ id, type, position: { x: 0, y: 0 }, data })

const definitionOf = (start: Record<string, unknown>, global: Record<string, unknown> = {}) => ({
  nodes: [
    node("start", "startCall", {
      name: "Start",
      greeting: "Hello, how can I help?",
      prompt: "Answer about plans.",
      ...start
    }),
    node("end", "endCall", { name: "End", prompt: "Say goodbye." }),
    node("global", "globalNode", { name: "Global", prompt: "Be brief.", ...global })
  ],
  edges: [{ id: "e1", source: "start", target: "end", data: { label: "Done", condition: "The caller is done" } }]
})

const createAgent = (account: TestAccount, definition: unknown) =>
  api.post("/api/v1/workflow/create/definition", { name: "Plans agent", workflow_definition: definition }, {
    token: account.token
  })

const agentWith = async (account: TestAccount, definition: unknown) => {
  const created = await createAgent(account, definition)
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

const systemPromptOf = (request: { body: any }) => request.body.messages[0].content as string

describe("automatic retrieval on each caller message", () => {
  it("gives the model the passages found for the caller's words, and records their document and page on the caller's turn", async () => {
    const say = await chat(
      owner,
      await agentWith(
        owner,
        definitionOf({
          document_uuids: [pdfUuid],
          knowledge_retrieval: "auto"
        })
      )
    )
    llm.enqueue(reply.content("Yes, the premium plan includes single sign-on with Okta and Azure AD."))
    const answered = await say("Does the premium plan include single sign-on?")
    expect(answered.status).toBe(200)
    expect(answered.body.reply).toContain("single sign-on")

    // One request: the passages came with the node's instructions, no tool round was needed.
    expect(llm.requests).toHaveLength(1)
    const prompt = systemPromptOf(llm.requests[0]!)
    expect(prompt).toContain("Answer about plans.")
    expect(prompt).toContain(`plans.pdf, page ${SSO_PAGE}`)
    expect(prompt).toContain("The premium plan includes single sign-on")
    expect(llm.requests[0]!.toolNames).not.toContain("search_knowledge_base")

    const asked = (answered.body.transcript as Array<any>).find((turn) => turn.role === "user")
    expect(asked.retrievals).toHaveLength(1)
    expect(asked.retrievals[0]).toMatchObject({
      query: "Does the premium plan include single sign-on?",
      status: "success",
      retrieval: "full_text",
      latency_ms: expect.any(Number)
    })
    expect(asked.retrievals[0].sources[0]).toMatchObject({
      document_uuid: pdfUuid,
      filename: "plans.pdf",
      page: SSO_PAGE,
      chunk_index: expect.any(Number)
    })

    // The next message is searched on its own words.
    llm.enqueue(reply.content("We are open Monday to Friday from 9 am to 6 pm."))
    const next = await say("What are your opening hours?")
    expect(next.status).toBe(200)
    expect(systemPromptOf(llm.requests[1]!)).not.toContain("single sign-on")
  })

  it("takes the global node's setting where the node sets none, and a node's `tool` keeps the search tool", async () => {
    const inherited = await chat(
      owner,
      await agentWith(
        owner,
        definitionOf({}, {
          document_uuids: [docxUuid],
          knowledge_retrieval: "auto"
        })
      )
    )
    llm.enqueue(reply.content("Within 30 days, with the receipt."))
    const returned = await inherited("Can I return unused items for a refund?")
    expect(returned.status).toBe(200)
    expect(systemPromptOf(llm.requests[0]!)).toContain("handbook.docx, Returns")
    const asked = (returned.body.transcript as Array<any>).find((turn) => turn.role === "user")
    expect(asked.retrievals[0].sources[0]).toMatchObject({ document_uuid: docxUuid, heading: "Returns" })

    llm.reset()
    const byTool = await chat(
      owner,
      await agentWith(
        owner,
        definitionOf({ knowledge_retrieval: "tool" }, {
          document_uuids: [docxUuid],
          knowledge_retrieval: "auto"
        })
      )
    )
    llm.enqueue(
      reply.toolCalls([{ name: "search_knowledge_base", arguments: { query: "refund returns" }, id: "call_kb" }]),
      reply.content("Within 30 days, with the receipt.")
    )
    const answered = await byTool("Can I return unused items for a refund?")
    expect(answered.status).toBe(200)
    expect(llm.requests[0]!.toolNames).toContain("search_knowledge_base")
    expect(systemPromptOf(llm.requests[0]!)).not.toContain("handbook.docx")
    const turns = answered.body.transcript as Array<any>
    expect(turns.find((turn) => turn.role === "user").retrievals).toBeUndefined()
    const call = turns.find((turn) => turn.tool_calls).tool_calls[0]
    expect(call.sources[0]).toMatchObject({ document_uuid: docxUuid, heading: "Returns" })
  })

  it("answers from full text when the embeddings endpoint is too slow for the turn", async () => {
    const account = await newAccount(api, "kb-slow")
    const credentials = { token: account.token }
    const docx = await untilIndexed(
      api,
      credentials,
      (await uploadDocument(api, credentials, "handbook.docx", DOCX_TYPE, await shopDocx())).document_uuid
    )
    await useLlm(api, account, llm.baseUrl)
    const settings = await api.put("/api/v1/organizations/model-configurations", {
      embeddings: {
        provider: "openai",
        model: "text-embedding-3-small",
        base_url: slowEmbeddings.baseUrl,
        api_key: "sk-e"
      }
    }, credentials)
    expect(settings.status).toBe(200)
    const say = await chat(
      account,
      await agentWith(
        account,
        definitionOf({
          document_uuids: [docx.document_uuid],
          knowledge_retrieval: "auto"
        })
      )
    )
    llm.enqueue(reply.content("Monday to Friday from 9 am to 6 pm."))
    const started = Date.now()
    const answered = await say("When is the Lisbon shop open?")
    expect(answered.status).toBe(200)
    // The endpoint answers after 4 s; the turn's budget for retrieval is 1.2 s.
    expect(Date.now() - started).toBeLessThan(3500)
    expect(slowEmbeddings.embeddingRequests.length).toBeGreaterThan(0)
    const asked = (answered.body.transcript as Array<any>).find((turn) => turn.role === "user")
    expect(asked.retrievals[0]).toMatchObject({ status: "success", retrieval: "full_text" })
    expect(asked.retrievals[0].latency_ms).toBeLessThan(1300)
    expect(asked.retrievals[0].sources[0]).toMatchObject({ heading: "Opening hours" })
    expect(systemPromptOf(llm.requests[0]!)).toContain("Monday to Friday from 9 am to 6 pm")
  })
})

describe("knowledge retrieval in graph validation", () => {
  it("refuses an unknown setting, `auto` without documents, and documents that are not the organization's", async () => {
    const stranger = await newAccount(api, "kb-stranger")
    const theirs = await uploadDocument(
      api,
      { token: stranger.token },
      "notes.md",
      "text/markdown",
      "# Notes\nPrivate."
    )

    const refused = await createAgent(owner, {
      nodes: [
        node("start", "startCall", {
          name: "Start",
          prompt: "Help.",
          document_uuids: [pdfUuid, "0b6c9a52-4f1e-4c5b-9a43-6b1f8f0c2d99", theirs.document_uuid, pdfUuid.toUpperCase()]
        }),
        node("ask", "agentNode", {
          name: "Ask",
          prompt: "Ask.",
          knowledge_retrieval: "auto",
          add_global_prompt: false
        }),
        node("sometimes", "agentNode", { name: "Sometimes", prompt: "Ask.", knowledge_retrieval: "always" }),
        node("end", "endCall", { name: "End", prompt: "Bye." }),
        node("global", "globalNode", { name: "Global", prompt: "Be brief.", knowledge_retrieval: "auto" })
      ],
      edges: [
        { id: "e1", source: "start", target: "ask", data: { label: "Ask", condition: "Ask" } },
        { id: "e2", source: "ask", target: "sometimes", data: { label: "Next", condition: "Next" } },
        { id: "e3", source: "sometimes", target: "end", data: { label: "Done", condition: "Done" } }
      ]
    })
    expect(refused.status).toBe(422)
    const problems = (refused.body.detail as Array<any>).map((problem) => [problem.loc.join("."), problem.type])
    expect(problems).toEqual([
      ["body.workflow_definition.nodes.2.data.knowledge_retrieval", "node_data"],
      ["body.workflow_definition.nodes.0.data.document_uuids.1", "document_unknown"],
      ["body.workflow_definition.nodes.0.data.document_uuids.2", "document_unknown"],
      ["body.workflow_definition.nodes.0.data.document_uuids.3", "document_duplicate"],
      ["body.workflow_definition.nodes.1.data.knowledge_retrieval", "knowledge_retrieval_without_documents"],
      ["body.workflow_definition.nodes.4.data.knowledge_retrieval", "knowledge_retrieval_without_documents"]
    ])
    const messages = (refused.body.detail as Array<any>).map((problem) => problem.msg)
    expect(messages[0]).toContain("data.knowledge_retrieval: Expected \"tool\" | \"auto\", actual \"always\"")
    expect(messages[2]).toContain(`"${theirs.document_uuid}" is not a document of this organization's knowledge base`)
    expect(messages[4]).toContain("list document_uuids on this node or on the global node")

    expect(
      (await createAgent(owner, definitionOf({ document_uuids: [pdfUuid], knowledge_retrieval: "auto" })))
        .status
    ).toBe(200)
  })
})

describe("a Dograh workflow export with documents", () => {
  it("imports once its documents are uploaded under the same uuids, and answers from them", async () => {
    const account = await newAccount(api, "kb-dograh")
    const credentials = { token: account.token }
    await useLlm(api, account, llm.baseUrl)
    const documentUuid = crypto.randomUUID()
    // What Dograh's editor downloads: the React Flow object (measured sizes, selection, viewport)
    // under workflow_definition; nodes name their documents by uuid only.
    const exported = {
      name: "Porto office",
      workflow_definition: {
        nodes: [
          {
            id: "1",
            type: "startCall",
            position: { x: 120, y: 40 },
            measured: { width: 320, height: 180 },
            selected: false,
            data: {
              name: "Greeting",
              prompt: "Greet the caller and answer questions about the office.",
              greeting_type: "text",
              greeting: "Hello, this is the Porto office.",
              allow_interrupt: true,
              add_global_prompt: true,
              is_start: true
            }
          },
          {
            id: "2",
            type: "agentNode",
            position: { x: 120, y: 320 },
            measured: { width: 320, height: 180 },
            data: {
              name: "Answer",
              prompt: "Answer from the office's documents.",
              allow_interrupt: true,
              document_uuids: [documentUuid],
              tool_uuids: []
            }
          },
          {
            id: "3",
            type: "endCall",
            position: { x: 120, y: 600 },
            data: { name: "Goodbye", prompt: "Say goodbye.", is_end: true }
          }
        ],
        edges: [
          {
            id: "xy-edge__1-2",
            source: "1",
            target: "2",
            type: "custom",
            animated: true,
            data: { label: "Question", condition: "The caller asks a question" }
          },
          {
            id: "xy-edge__2-3",
            source: "2",
            target: "3",
            type: "custom",
            data: { label: "Done", condition: "The caller is done" }
          }
        ],
        viewport: { x: 0, y: 0, zoom: 0.8 }
      }
    }
    const early = await api.post("/api/v1/workflow/create/definition", exported, credentials)
    expect(early.status).toBe(422)
    expect(early.body.detail.map((problem: any) => [problem.loc.join("."), problem.type])).toEqual([
      ["body.workflow_definition.nodes.1.data.document_uuids.0", "document_unknown"]
    ])

    // The documents move through Dograh's knowledge-base routes, keeping their uuids; a uuid is one document.
    const uploaded = await uploadDocument(
      api,
      credentials,
      "office.md",
      "text/markdown",
      "# Opening hours\n\nThe Porto office is open Tuesday to Saturday from 10 am to 7 pm.\n",
      documentUuid
    )
    expect(uploaded.document_uuid).toBe(documentUuid)
    expect(await untilIndexed(api, credentials, documentUuid)).toMatchObject({ processing_status: "completed" })
    const stranger = await newAccount(api, "kb-dograh-stranger")
    const claimed = await api.post("/api/v1/knowledge-base/upload-url", {
      filename: "office.md",
      mime_type: "text/markdown",
      document_uuid: documentUuid
    }, { token: stranger.token })
    expect(claimed.status).toBe(409)

    const imported = await api.post("/api/v1/workflow/create/definition", exported, credentials)
    expect(imported.status).toBe(200)
    const say = await chat(account, imported.body.id)
    llm.enqueue(
      reply.toolCalls([{ name: "question", arguments: {}, id: "call_move" }]),
      reply.toolCalls([{
        name: "search_knowledge_base",
        arguments: { query: "Porto office opening hours" },
        id: "kb"
      }]),
      reply.content("We are open Tuesday to Saturday from 10 am to 7 pm.")
    )
    const answered = await say("When is the Porto office open?")
    expect(answered.status).toBe(200)
    expect(answered.body.reply).toContain("Tuesday to Saturday")
    const result = llm.requests[2]!.body.messages.find((message: any) =>
      message.role === "tool" && message.tool_call_id === "kb"
    )
    expect(result.content).toContain("office.md, Opening hours")
    expect(result.content).toContain("Tuesday to Saturday from 10 am to 7 pm")
    const call = (answered.body.transcript as Array<any>).flatMap((turn) => turn.tool_calls ?? [])
      .find((candidate: any) => candidate.name === "search_knowledge_base")
    expect(call.sources[0]).toMatchObject({
      document_uuid: documentUuid,
      filename: "office.md",
      heading: "Opening hours"
    })
  })
})
