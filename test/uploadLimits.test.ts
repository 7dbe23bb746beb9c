import { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as http from "node:http"
import * as os from "node:os"
import * as path from "node:path"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { Storage } from "../services/Storage.ts"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { postgresUrl } from "./support/database.ts"
import { startInProcessServer } from "./support/inProcessServer.ts"
import { type LocalS3, startS3 } from "./support/s3.ts"
import { type RunningServer, startServer, TEST_ADMIN } from "./support/server.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

/** A contacts CSV of exactly 13 + 13 × rows bytes. */
const csvOf = (rows: number) => `phone_number\n${"+14155550123\n".repeat(rows)}`

const put = (url: string, body: string, contentType = "text/csv") =>
  fetch(url, { method: "PUT", headers: { "content-type": contentType }, body })

const presign = (api: Client, account: TestAccount, body?: unknown) =>
  api.post("/api/v1/s3/presigned-upload-url", body, { token: account.token })

const partialFiles = async (root: string) =>
  (await fs.readdir(root, { recursive: true }).catch(() => [] as Array<string>)).filter((name) =>
    name.endsWith(".part")
  )

const until = async (condition: () => Promise<boolean>, what: string) => {
  for (let attempt = 0; attempt < 100; attempt++) {
    if (await condition()) return
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
  throw new Error(`timed out waiting until ${what}`)
}

const stored = (server: RunningServer, key: string) =>
  server.run(Effect.either(Effect.flatMap(Storage, (storage) => storage.size(key))))

describe("an upload URL on local storage", () => {
  let server: RunningServer
  let api: Client

  beforeAll(async () => {
    server = await startServer({ UPLOAD_MAX_BYTES: "4096" })
    api = client(server.url)
  })
  afterAll(() => server?.close())

  it("stores one file: a second PUT to the same URL is refused with 403 and the file kept", async () => {
    const account = await newAccount(api)
    const grant = await presign(api, account)
    expect((await put(grant.body.upload_url, csvOf(2))).status).toBe(204)
    const replay = await put(grant.body.upload_url, csvOf(5))
    expect(replay.status).toBe(403)
    expect(await replay.json()).toEqual({ detail: "This upload URL has already been used; request a new upload URL" })
    expect(await stored(server, grant.body.s3_key)).toMatchObject({ right: csvOf(2).length })
  })

  it("leaves no partial file when the client hangs up mid-upload, and the URL can be used again", async () => {
    const account = await newAccount(api)
    const grant = await presign(api, account)
    const storageRoot = path.join(server.dataDir, "storage")
    const request = http.request(grant.body.upload_url, {
      method: "PUT",
      headers: { "content-type": "text/csv", "content-length": "4000" }
    })
    request.on("error", () => undefined)
    request.write(csvOf(100))
    await until(async () => (await partialFiles(storageRoot)).length > 0, "the upload is being written")
    request.destroy()
    await until(async () => (await partialFiles(storageRoot)).length === 0, "the partial file is removed")
    expect((await stored(server, grant.body.s3_key))._tag).toBe("Left")
    expect((await put(grant.body.upload_url, csvOf(2))).status).toBe(204)
  })

  it("leaves no partial file when an upload is refused for its size", async () => {
    const account = await newAccount(api)
    const grant = await presign(api, account)
    expect((await put(grant.body.upload_url, csvOf(400))).status).toBe(413)
    expect(await partialFiles(path.join(server.dataDir, "storage"))).toEqual([])
  })
})

/** Settings for a server on `dataDir` that another server started later on the same directory shares everything with. */
const sharedSettings = (dataDir: string) => ({
  TALKGRAPH_DATA_DIR: dataDir,
  TALKGRAPH_SIGNUP: "true",
  TALKGRAPH_ADMIN_EMAIL: TEST_ADMIN.email,
  TALKGRAPH_ADMIN_PASSWORD: TEST_ADMIN.password,
  LOG_LEVEL: "error",
  ...(postgresUrl()
    ? { DATABASE_URL: postgresUrl()!, TALKGRAPH_SECRET_KEY: "test-secret-key-test-secret-key-0123456789" }
    : {})
})

describe("uploads across processes", () => {
  let dataDir: string

  beforeAll(async () => {
    dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-test-"))
    if (!postgresUrl()) await fs.cp(inject("pgliteTemplate"), dataDir, { recursive: true })
  })
  afterAll(() => fs.rm(dataDir, { recursive: true, force: true }))

  it("refuses an upload URL replayed to another process after it was used", async () => {
    const first = await startInProcessServer(sharedSettings(dataDir))
    const account = await newAccount(client(first.url))
    const grant = await presign(client(first.url), account)
    expect((await put(grant.body.upload_url, csvOf(2))).status).toBe(204)
    await first.close()

    const second = await startInProcessServer(sharedSettings(dataDir))
    try {
      const replay = new URL(grant.body.upload_url)
      const there = new URL(second.url)
      replay.host = there.host
      expect((await put(replay.toString(), csvOf(5))).status).toBe(403)
    } finally {
      await second.close()
    }
  })

  it("removes partial files abandoned by a process that died, at start, and keeps fresh ones", async () => {
    const folder = path.join(dataDir, "storage", "organizations", "1", "contacts")
    await fs.mkdir(folder, { recursive: true })
    const abandoned = path.join(folder, "leads.csv.0b6c3c1e.part")
    const fresh = path.join(folder, "other.csv.9f3e2a7d.part")
    await fs.writeFile(abandoned, csvOf(50))
    await fs.writeFile(fresh, csvOf(5))
    const anHourAgo = new Date(Date.now() - 3600_000)
    await fs.utimes(abandoned, anHourAgo, anHourAgo)

    const server = await startInProcessServer(sharedSettings(dataDir))
    try {
      await until(
        async () => !(await fs.access(abandoned).then(() => true, () => false)),
        "the abandoned partial file is removed"
      )
      await fs.access(fresh)
    } finally {
      await server.close()
    }
  })
})

describe("the storage quota on local storage", () => {
  let server: RunningServer
  let api: Client

  beforeAll(async () => {
    server = await startServer({ UPLOAD_MAX_BYTES: "4096", STORAGE_QUOTA_BYTES: "1000" })
    api = client(server.url)
  })
  afterAll(() => server?.close())

  it("refuses uploads past the organization's quota with 413, counting call recordings too", async () => {
    const account = await newAccount(api)
    const first = await presign(api, account)
    expect((await put(first.body.upload_url, csvOf(45))).status).toBe(204)

    const announced = await presign(api, account, { file_name: "more.csv", file_size: 500 })
    expect(announced.status).toBe(413)
    expect(announced.body.detail).toBe(
      "This organization's storage quota is 1000 bytes and 598 are in use; delete recordings or ask the operator to raise STORAGE_QUOTA_BYTES"
    )

    const unannounced = await presign(api, account)
    expect(unannounced.status).toBe(200)
    const over = await put(unannounced.body.upload_url, csvOf(38))
    expect(over.status).toBe(413)
    expect(((await over.json()) as { detail: string }).detail).toMatch(/storage quota is 1000 bytes and 598 are in use/)
    expect(await partialFiles(path.join(server.dataDir, "storage"))).toEqual([])
    expect((await stored(server, unannounced.body.s3_key))._tag).toBe("Left")
    // The refused upload did not use the URL up.
    expect((await put(unannounced.body.upload_url, csvOf(20))).status).toBe(204)

    const recording = `calls/${account.organizationId}/991/recording.wav`
    await server.run(Effect.flatMap(Storage, (storage) => storage.write(recording, new Uint8Array(200), "audio/wav")))
    const full = await presign(api, account)
    expect(full.status).toBe(413)
    expect(full.body.detail).toMatch(/quota is 1000 bytes and 1071 are in use/)

    const other = await newAccount(api, "other")
    expect((await presign(api, other)).status).toBe(200)

    await server.run(Effect.flatMap(Storage, (storage) => storage.remove(recording)))
    expect((await presign(api, account)).status).toBe(200)
  })

  it("lets only one of two concurrent uploads that together pass the quota through", async () => {
    const account = await newAccount(api)
    const grants = await Promise.all([presign(api, account), presign(api, account)])
    const statuses = await Promise.all(
      grants.map((grant) => put(grant.body.upload_url, csvOf(45)).then((reply) => reply.status))
    )
    expect(statuses.sort()).toEqual([204, 413])
  })

  it("counts a clip upload against the same quota", async () => {
    const account = await newAccount(api)
    const first = await presign(api, account)
    expect((await put(first.body.upload_url, csvOf(45))).status).toBe(204)
    const clip = await api.post("/api/v1/workflow-recordings/upload-url", {
      files: [{ filename: "hello.wav", mime_type: "audio/wav", file_size: 600 }]
    }, { token: account.token })
    expect(clip.status).toBe(413)
    expect(clip.body.detail).toMatch(/storage quota is 1000 bytes/)
  })
})

describe("the storage quota on S3 storage (s3rver on loopback)", () => {
  let s3: LocalS3
  let server: RunningServer
  let api: Client

  beforeAll(async () => {
    s3 = await startS3()
    server = await startServer({ ...s3.env, STORAGE_QUOTA_BYTES: "1000" })
    api = client(server.url)
  })
  afterAll(async () => {
    await server?.close()
    await s3?.close()
  })

  it("counts a file uploaded straight to the store once a campaign uses it", async () => {
    const account = await newAccount(api)
    const grant = await presign(api, account)
    expect((await put(grant.body.upload_url, csvOf(45))).status).toBe(200)
    const workflowId = await insertWorkflow(server, account.organizationId)
    const campaign = await api.post("/api/v1/campaign/create", {
      name: "Counted",
      workflow_id: workflowId,
      source_type: "csv",
      source_id: grant.body.s3_key
    }, { token: account.token })
    expect(campaign.status).toBe(200)
    const refused = await presign(api, account, { file_name: "more.csv", file_size: 500 })
    expect(refused.status).toBe(413)
    expect(refused.body.detail).toMatch(/quota is 1000 bytes and 598 are in use/)
  })
})
