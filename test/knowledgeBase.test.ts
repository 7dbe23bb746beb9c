import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { newAccount, newApiKey, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import {
  DOCX_TYPE,
  PDF_TYPE,
  scannedPdf,
  shopDocx,
  SSO_PAGE,
  twoHundredPagePdf,
  untilIndexed,
  uploadDocument
} from "./support/knowledgeDocuments.ts"
import { type ScriptedLlm, startScriptedLlm } from "./support/scriptedLlm.ts"
import { type RunningServer, startServer } from "./support/server.ts"

let server: RunningServer
let api: Client
let llm: ScriptedLlm
let pdfBytes: Uint8Array
let docxBytes: Uint8Array

beforeAll(async () => {
  ;[server, llm, pdfBytes, docxBytes] = await Promise.all([
    startServer({}, { ownDatabase: true }),
    startScriptedLlm(),
    twoHundredPagePdf(),
    shopDocx()
  ])
  api = client(server.url)
})
afterAll(async () => {
  await server?.close()
  await llm?.close()
})

const search = (account: TestAccount, query: string, extra: Record<string, unknown> = {}) =>
  api.post("/api/v1/knowledge-base/search", { query, ...extra }, { token: account.token })

/** An organization with the PDF and the DOCX indexed. */
const indexedAccount = async (label: string) => {
  const account = await newAccount(api, label)
  const credentials = { token: account.token }
  const pdf = await uploadDocument(api, credentials, "Plans and terms.pdf", PDF_TYPE, pdfBytes)
  const docx = await uploadDocument(api, credentials, "handbook.docx", DOCX_TYPE, docxBytes)
  expect(pdf.processing_status).toBe("pending")
  const [pdfDone, docxDone] = await Promise.all([
    untilIndexed(api, credentials, pdf.document_uuid),
    untilIndexed(api, credentials, docx.document_uuid)
  ])
  return { account, pdf: pdfDone, docx: docxDone }
}

describe("knowledge bases", () => {
  it("indexes a 200-page PDF and a DOCX, and answers from the right page and section with full-text search only", async () => {
    const { account, docx, pdf } = await indexedAccount("fulltext")
    expect(pdf).toMatchObject({
      processing_status: "completed",
      processing_error: null,
      total_pages: 200,
      pages_processed: 200,
      filename: "Plans-and-terms.pdf",
      mime_type: PDF_TYPE,
      file_size_bytes: pdfBytes.length
    })
    expect(pdf.total_chunks).toBeGreaterThanOrEqual(200)
    expect(docx).toMatchObject({ processing_status: "completed", mime_type: DOCX_TYPE })

    const sso = await search(account, "Does the premium plan include SSO?")
    expect(sso.status).toBe(200)
    expect(sso.body.retrieval).toBe("full_text")
    expect(sso.body.chunks[0]).toMatchObject({
      document_uuid: pdf.document_uuid,
      filename: "Plans-and-terms.pdf",
      chunk_metadata: { page: SSO_PAGE }
    })
    expect(sso.body.chunks[0].chunk_text).toContain("single sign-on")

    const hours = await search(account, "What are your opening hours on Saturday?")
    expect(hours.body.chunks[0]).toMatchObject({
      document_uuid: docx.document_uuid,
      chunk_metadata: { heading: "Opening hours", headings: ["Customer handbook", "Opening hours"] }
    })
    expect(hours.body.chunks[0].chunk_text).toContain("10 am to 2 pm")

    const listed = await api.get("/api/v1/knowledge-base/documents?limit=1", { token: account.token })
    expect(listed.body).toMatchObject({ total: 2, limit: 1, offset: 0 })
    expect(listed.body.documents).toHaveLength(1)

    const onlyDocx = await search(account, "premium plan SSO", { document_uuids: [docx.document_uuid] })
    expect(onlyDocx.body.chunks.every((chunk: any) => chunk.document_uuid === docx.document_uuid)).toBe(true)
  })

  it("fuses full-text and embedding rankings when the organization has an embeddings endpoint", async () => {
    const account = await newAccount(api, "hybrid")
    const settings = await api.put("/api/v1/organizations/model-configurations", {
      embeddings: {
        provider: "openai",
        model: "text-embedding-3-small",
        base_url: llm.baseUrl,
        api_key: "sk-embed-1234"
      }
    }, { token: account.token })
    expect(settings.status).toBe(200)
    expect(settings.body.embeddings).toMatchObject({ model: "text-embedding-3-small", api_key: "****1234" })
    const credentials = { token: account.token }
    const pdf = await untilIndexed(
      api,
      credentials,
      (await uploadDocument(api, credentials, "plans.pdf", PDF_TYPE, pdfBytes)).document_uuid
    )
    const docx = await untilIndexed(
      api,
      credentials,
      (await uploadDocument(api, credentials, "handbook.docx", DOCX_TYPE, docxBytes)).document_uuid
    )
    expect(pdf).toMatchObject({ processing_status: "completed", embedding_model: "text-embedding-3-small" })
    expect(llm.embeddingRequests.length).toBeGreaterThan(3)

    const sso = await search(account, "Is single sign-on with Okta part of the premium plan?")
    expect(sso.body.retrieval).toBe("hybrid")
    expect(sso.body.chunks[0]).toMatchObject({ document_uuid: pdf.document_uuid, chunk_metadata: { page: SSO_PAGE } })
    expect(sso.body.chunks[0].similarity).toBeGreaterThan(0.3)

    const refund = await search(account, "Can items be returned for a refund?")
    expect(refund.body.chunks[0]).toMatchObject({
      document_uuid: docx.document_uuid,
      chunk_metadata: { heading: "Returns" }
    })
  })

  it("keeps answering after the organization changes to an embeddings model of another dimension", async () => {
    const account = await newAccount(api, "two-models")
    const credentials = { token: account.token }
    const useModel = (model: string) =>
      api.put("/api/v1/organizations/model-configurations", {
        embeddings: { provider: "openai", model, base_url: llm.baseUrl, api_key: "sk-embed-1234" }
      }, { token: account.token })
    expect((await useModel("text-embedding-3-small")).status).toBe(200)
    const pdf = await untilIndexed(
      api,
      credentials,
      (await uploadDocument(api, credentials, "plans.pdf", PDF_TYPE, pdfBytes)).document_uuid
    )
    expect((await useModel("hashed-512d")).status).toBe(200)
    const docx = await untilIndexed(
      api,
      credentials,
      (await uploadDocument(api, credentials, "handbook.docx", DOCX_TYPE, docxBytes)).document_uuid
    )
    expect(docx).toMatchObject({ processing_status: "completed", embedding_model: "hashed-512d" })

    const refund = await search(account, "Can items be returned for a refund?")
    expect(refund.status).toBe(200)
    expect(refund.body.retrieval).toBe("hybrid")
    expect(refund.body.chunks[0]).toMatchObject({
      document_uuid: docx.document_uuid,
      chunk_metadata: { heading: "Returns" }
    })
    // The PDF's vectors (of the old model) are not compared with the question's; its words still are.
    const sso = await search(account, "Is single sign-on with Okta part of the premium plan?")
    expect(sso.body.chunks[0]).toMatchObject({ document_uuid: pdf.document_uuid, chunk_metadata: { page: SSO_PAGE } })
  })

  it("says why a document could not be indexed", async () => {
    const account = await newAccount(api, "failures")
    const credentials = { token: account.token }
    const scan = await uploadDocument(api, credentials, "scan.pdf", PDF_TYPE, await scannedPdf())
    const broken = await uploadDocument(api, credentials, "broken.docx", DOCX_TYPE, "this is not a zip archive")
    const [scanDone, brokenDone] = await Promise.all([
      untilIndexed(api, credentials, scan.document_uuid),
      untilIndexed(api, credentials, broken.document_uuid)
    ])
    expect(scanDone.processing_status).toBe("failed")
    expect(scanDone.processing_error).toMatch(/scanned PDF without text/)
    expect(brokenDone.processing_status).toBe("failed")
    expect(brokenDone.processing_error).toMatch(/not a valid DOCX/)

    const unsupported = await api.post("/api/v1/knowledge-base/upload-url", {
      filename: "sheet.xlsx",
      mime_type: "application/vnd.ms-excel"
    }, credentials)
    expect(unsupported.status).toBe(422)
    expect(unsupported.body.detail[0].loc).toEqual(["body", "mime_type"])
  })

  it("stops retrieving a deleted document's chunks", async () => {
    const account = await newAccount(api, "delete")
    const credentials = { token: account.token }
    const docx = await untilIndexed(
      api,
      credentials,
      (await uploadDocument(api, credentials, "handbook.docx", DOCX_TYPE, docxBytes)).document_uuid
    )
    expect((await search(account, "opening hours")).body.total_results).toBeGreaterThan(0)
    const deleted = await api.delete(`/api/v1/knowledge-base/documents/${docx.document_uuid}`, credentials)
    expect(deleted.status).toBe(200)
    expect((await search(account, "opening hours")).body).toMatchObject({ chunks: [], total_results: 0 })
    expect((await api.get(`/api/v1/knowledge-base/documents/${docx.document_uuid}`, credentials)).status).toBe(404)
  })

  it("never shows or retrieves one organization's documents for another", async () => {
    const owner = await newAccount(api, "owner")
    const other = await newAccount(api, "other")
    const uploaded = await uploadDocument(api, { token: owner.token }, "handbook.docx", DOCX_TYPE, docxBytes)
    await untilIndexed(api, { token: owner.token }, uploaded.document_uuid)

    expect((await search(other, "opening hours")).body.total_results).toBe(0)
    expect((await search(other, "opening hours", { document_uuids: [uploaded.document_uuid] })).body.total_results)
      .toBe(0)
    expect((await api.get("/api/v1/knowledge-base/documents", { token: other.token })).body.total).toBe(0)
    const path = `/api/v1/knowledge-base/documents/${uploaded.document_uuid}`
    expect((await api.get(path, { token: other.token })).status).toBe(404)
    expect((await api.delete(path, { token: other.token })).status).toBe(404)
    expect((await api.post(`${path}/reindex`, undefined, { token: other.token })).status).toBe(404)
    const stolen = await api.post("/api/v1/knowledge-base/process-document", {
      document_uuid: uploaded.document_uuid,
      s3_key: uploaded.s3_key
    }, { token: other.token })
    expect(stolen.status).toBe(422)
    expect((await search(owner, "opening hours")).body.total_results).toBeGreaterThan(0)
  })

  it("serves documents and search on v2 to API keys with the knowledge:read scope only", async () => {
    const account = await newAccount(api, "v2")
    const uploaded = await uploadDocument(api, { token: account.token }, "handbook.docx", DOCX_TYPE, docxBytes)
    await untilIndexed(api, { token: account.token }, uploaded.document_uuid)
    const reader = await newApiKey(api, account, ["knowledge:read"])
    const agentsOnly = await newApiKey(api, account, ["agents:read"])

    const listed = await api.get("/api/v2/knowledge-base/documents?page_size=10", { apiKey: reader })
    expect(listed.status).toBe(200)
    expect(listed.body.pagination).toEqual({ page: 1, page_size: 10, total_items: 1, total_pages: 1 })
    expect(listed.body.data[0]).toMatchObject({ document_uuid: uploaded.document_uuid, processing_status: "completed" })
    const one = await api.get(`/api/v2/knowledge-base/documents/${uploaded.document_uuid}`, { apiKey: reader })
    expect(one.body.data.filename).toBe("handbook.docx")
    const found = await api.post("/api/v2/knowledge-base/search", { query: "returns refund" }, { apiKey: reader })
    expect(found.status).toBe(200)
    expect(found.body.data.chunks[0].chunk_metadata.heading).toBe("Returns")
    const bases = await api.get("/api/v2/knowledge-bases", { apiKey: reader })
    expect(bases.status).toBe(200)
    expect(bases.body.data).toEqual([{
      id: "default",
      documents: { total: 1, pending: 0, processing: 0, completed: 1, failed: 0 },
      total_chunks: one.body.data.total_chunks,
      total_bytes: docxBytes.length,
      languages: ["english"],
      embedding_models: [],
      updated_at: one.body.data.updated_at
    }])
    expect(one.body.data.total_chunks).toBeGreaterThan(0)
    // Another organization's knowledge base counts none of these documents.
    const stranger = await newAccount(api, "v2-other")
    const strangerBases = await api.get("/api/v2/knowledge-bases", {
      apiKey: await newApiKey(api, stranger, ["knowledge:read"])
    })
    expect(strangerBases.body.data[0]).toMatchObject({ documents: { total: 0 }, total_chunks: 0, languages: [] })
    expect((await api.get("/api/v2/knowledge-bases", { apiKey: agentsOnly })).status).toBe(403)

    const refused = await api.get("/api/v2/knowledge-base/documents", { apiKey: agentsOnly })
    expect(refused.status).toBe(403)
    expect(refused.body.error.code).toBe("forbidden")
    const cannotUpload = await api.post("/api/v1/knowledge-base/upload-url", {
      filename: "a.txt",
      mime_type: "text/plain"
    }, { apiKey: reader })
    expect(cannotUpload.status).toBe(403)
  })
})
