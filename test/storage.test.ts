import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Storage } from "../services/Storage.ts"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { type LocalS3, startS3 } from "./support/s3.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

const CSV = "phone_number,name\n+14155550123,Ann\n+14155550124,Bob\n"

const put = (url: string, body: string, contentType = "text/csv") =>
  fetch(url, { method: "PUT", headers: { "content-type": contentType }, body })

describe("local storage (embedded default)", () => {
  let server: RunningServer
  let api: Client

  beforeAll(async () => {
    server = await startServer({ UPLOAD_MAX_BYTES: "4096" })
    api = client(server.url)
  })
  afterAll(() => server?.close())

  it("hands out an upload URL under the organization's prefix, needing no body", async () => {
    const account = await newAccount(api)
    const reply = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: account.token })
    expect(reply.status).toBe(200)
    expect(reply.body.s3_key).toMatch(
      new RegExp(`^organizations/${account.organizationId}/contacts/[0-9a-f-]{36}\\.csv$`)
    )
    expect(reply.body.upload_url).toMatch(new RegExp(`^${server.url}/api/v1/uploads/local\\?`))
    expect(reply.body.expires_in).toBe(900)
    expect(reply.body.max_size_bytes).toBe(4096)
    expect(reply.body.file_key).toBe(reply.body.s3_key)
  })

  it("takes Dograh's body {file_name, file_size, content_type} and answers file_key beside s3_key", async () => {
    const account = await newAccount(api)
    const grant = await api.post("/api/v1/s3/presigned-upload-url", {
      file_name: "leads.csv",
      file_size: CSV.length,
      content_type: "text/csv"
    }, {
      token: account.token
    })
    expect(grant.status).toBe(200)
    expect(grant.body.file_key).toBe(grant.body.s3_key)
    expect(grant.body.max_size_bytes).toBe(CSV.length)
    expect((await put(grant.body.upload_url, CSV)).status).toBe(204)
  })

  it("documents the body as optional, with its fields", async () => {
    const doc = (await api.get("/openapi.json")).body
    const body = doc.paths["/api/v1/s3/presigned-upload-url"].post.requestBody
    expect(body.required).toBe(false)
    expect(Object.keys(body.content["application/json"].schema.properties).sort()).toEqual([
      "content_type",
      "file_name",
      "file_size"
    ])
    expect(body.content["application/json"].schema.required ?? []).toEqual([])
    const response = doc.components.schemas.PresignedUploadResponse
    expect(response.required).toEqual(expect.arrayContaining(["upload_url", "s3_key", "file_key"]))
  })

  it("takes a .csv sent as application/vnd.ms-excel or application/octet-stream, as browsers send it", async () => {
    const account = await newAccount(api)
    const workflowId = await insertWorkflow(server, account.organizationId)
    for (const contentType of ["application/vnd.ms-excel", "application/octet-stream"]) {
      const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: account.token })
      expect((await put(grant.body.upload_url, CSV, contentType)).status).toBe(204)
      const declared = await api.post("/api/v1/s3/presigned-upload-url", {
        file_name: "leads.csv",
        content_type: contentType
      }, {
        token: account.token
      })
      expect(declared.status).toBe(200)
      expect(declared.body.content_type).toBe(contentType)
      expect((await put(declared.body.upload_url, CSV, contentType)).status).toBe(204)
      const campaign = await api.post("/api/v1/campaign/create", {
        name: `Sent as ${contentType}`,
        workflow_id: workflowId,
        source_type: "csv",
        source_id: declared.body.file_key
      }, { token: account.token })
      expect(campaign.status).toBe(200)
      expect(campaign.body.total_rows).toBe(2)
    }
  })

  it("round-trips a CSV: PUT without a service key, then a campaign reads it", async () => {
    const account = await newAccount(api)
    const grant = await api.post("/api/v1/s3/presigned-upload-url", {
      file_name: "My Leads.csv",
      content_type: "text/csv"
    }, {
      token: account.token
    })
    expect(grant.body.s3_key).toMatch(/_My-Leads\.csv$/)
    const upload = await put(grant.body.upload_url, CSV, "text/csv; charset=utf-8")
    expect(upload.status).toBe(204)
    const workflowId = await insertWorkflow(server, account.organizationId)
    const campaign = await api.post("/api/v1/campaign/create", {
      name: "Round trip",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: grant.body.s3_key
    }, { token: account.token })
    expect(campaign.status).toBe(200)
    expect(campaign.body.total_rows).toBe(2)
  })

  it("checks the optional body: file name, content type and announced size", async () => {
    const account = await newAccount(api)
    const bad = await api.post("/api/v1/s3/presigned-upload-url", {
      file_name: "leads.xlsx",
      content_type: "application/pdf"
    }, {
      token: account.token
    })
    expect(bad.status).toBe(422)
    expect(bad.body.detail.map((problem: { loc: Array<string> }) => problem.loc)).toEqual([
      ["body", "file_name"],
      ["body", "content_type"]
    ])
    const tooBig = await api.post("/api/v1/s3/presigned-upload-url", { file_size: 5000 }, { token: account.token })
    expect(tooBig.status).toBe(413)
    expect(tooBig.body.detail).toMatch(/4096-byte upload limit/)
  })

  it("refuses a tampered URL with 403", async () => {
    const account = await newAccount(api)
    const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: account.token })
    const url = new URL(grant.body.upload_url)
    url.searchParams.set("max", "999999999")
    const reply = await put(url.toString(), CSV)
    expect(reply.status).toBe(403)
    expect(await reply.json()).toEqual({ detail: "The upload URL's signature is invalid; request a new upload URL" })

    const otherKey = new URL(grant.body.upload_url)
    otherKey.searchParams.set("key", `organizations/${account.organizationId + 1}/contacts/x.csv`)
    expect((await put(otherKey.toString(), CSV)).status).toBe(403)
  })

  it("refuses an expired URL with 403", async () => {
    const grant = await server.run(
      Effect.flatMap(
        Storage,
        (storage) =>
          storage.presignUpload("organizations/1/contacts/expiring.csv", {
            contentType: "text/csv",
            maxBytes: 4096,
            expiresInSeconds: 1
          })
      )
    )
    await new Promise((resolve) => setTimeout(resolve, 2100))
    const reply = await put(grant.url, CSV)
    expect(reply.status).toBe(403)
    expect(((await reply.json()) as { detail: string }).detail).toMatch(/expired/)
  })

  it("refuses another content type with 403", async () => {
    const account = await newAccount(api)
    const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: account.token })
    const reply = await put(grant.body.upload_url, CSV, "application/json")
    expect(reply.status).toBe(403)
    expect(((await reply.json()) as { detail: string }).detail).toBe(
      "This upload URL only accepts Content-Type: text/csv"
    )
  })

  it("refuses a file over the size cap with 413 and stores nothing", async () => {
    const account = await newAccount(api)
    const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: account.token })
    const reply = await put(grant.body.upload_url, `phone_number\n${"+14155550123\n".repeat(400)}`)
    expect(reply.status).toBe(413)
    const size = await server.run(Effect.either(Effect.flatMap(Storage, (storage) => storage.size(grant.body.s3_key))))
    expect(size._tag).toBe("Left")
  })

  it("refuses a campaign on another organization's upload key", async () => {
    const owner = await newAccount(api, "owner")
    const intruder = await newAccount(api, "intruder")
    const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: owner.token })
    await put(grant.body.upload_url, CSV)
    const workflowId = await insertWorkflow(server, intruder.organizationId)
    const reply = await api.post("/api/v1/campaign/create", {
      name: "Stolen",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: grant.body.s3_key
    }, { token: intruder.token })
    expect(reply.status).toBe(422)
    expect(reply.body.detail[0]).toMatchObject({
      loc: ["body", "source_id"],
      msg: expect.stringMatching(/not an upload of this organization/)
    })
  })

  it("needs a key with campaigns:write to hand out upload URLs", async () => {
    const account = await newAccount(api)
    const readOnly = await newApiKey(api, account, ["campaigns:read"])
    const reply = await api.post("/api/v1/s3/presigned-upload-url", undefined, { apiKey: readOnly })
    expect(reply.status).toBe(403)
    expect((await api.post("/api/v1/s3/presigned-upload-url")).status).toBe(401)
  })
})

describe("S3 storage (s3rver on loopback)", () => {
  let s3: LocalS3
  let server: RunningServer
  let api: Client

  beforeAll(async () => {
    s3 = await startS3()
    server = await startServer(s3.env)
    api = client(server.url)
  })
  afterAll(async () => {
    await server?.close()
    await s3?.close()
  })

  it("round-trips a CSV through a presigned S3 URL", async () => {
    const account = await newAccount(api)
    const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: account.token })
    expect(grant.status).toBe(200)
    expect(grant.body.upload_url).toContain(
      `${s3.endpoint}/${s3.bucket}/uploads/organizations/${account.organizationId}/contacts/`
    )
    expect(grant.body.upload_url).toContain("X-Amz-Signature=")
    const upload = await put(grant.body.upload_url, CSV)
    expect(upload.status).toBe(200)
    expect(grant.body.file_key).toBe(grant.body.s3_key)
    const workflowId = await insertWorkflow(server, account.organizationId)
    const campaign = await api.post("/api/v1/campaign/create", {
      name: "From S3",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: grant.body.s3_key
    }, { token: account.token })
    expect(campaign.status).toBe(200)
    expect(campaign.body.total_rows).toBe(2)
  })

  it("takes a .csv sent as application/vnd.ms-excel or application/octet-stream", async () => {
    const account = await newAccount(api)
    for (const contentType of ["application/vnd.ms-excel", "application/octet-stream"]) {
      const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: account.token })
      expect((await put(grant.body.upload_url, CSV, contentType)).status).toBe(200)
    }
    const sized = await api.post("/api/v1/s3/presigned-upload-url", { file_name: "leads.csv", file_size: CSV.length }, {
      token: account.token
    })
    expect((await put(sized.body.upload_url, CSV, "application/vnd.ms-excel")).status).toBe(200)
  })

  it("answers 422 when nothing was uploaded to the key", async () => {
    const account = await newAccount(api)
    const grant = await api.post("/api/v1/s3/presigned-upload-url", undefined, { token: account.token })
    const workflowId = await insertWorkflow(server, account.organizationId)
    const campaign = await api.post("/api/v1/campaign/create", {
      name: "Nothing there",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: grant.body.s3_key
    }, { token: account.token })
    expect(campaign.status).toBe(422)
    expect(campaign.body.detail[0].msg).toBe("No file has been uploaded to source_id yet")
  })

  it("does not serve local upload URLs when storage is S3", async () => {
    const reply = await put(
      `${server.url}/api/v1/uploads/local?key=organizations/1/contacts/a.csv&expires=1&max=1&content_type=text/csv&signature=x`,
      CSV
    )
    expect(reply.status).toBe(404)
  })
})
