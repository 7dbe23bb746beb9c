import { SqlClient } from "@effect/sql"
import { Deferred, Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ContactImports } from "../services/ContactImports.ts"
import { newAccount, type TestAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { databaseKind } from "./support/database.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { newTelephony, uploadCsv } from "./support/uploads.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

let server: RunningServer
let api: Client

// Files over 2,000 bytes load in the background, so modest files show the large-file behaviour.
beforeAll(async () => {
  server = await startServer({ CAMPAIGN_IMPORT_INLINE_BYTES: "2000" })
  api = client(server.url)
})
afterAll(() => server?.close())

const contactsCsv = (rows: number, tail = "") =>
  `phone_number,first_name\n${
    Array.from({ length: rows }, (_, i) => `+1415${String(2_000_000 + i)},Name${i}`).join("\n")
  }\n${tail}`

const create = async (account: TestAccount, csv: string) => {
  const workflowId = await insertWorkflow(server, account.organizationId, { variables: ["first_name"] })
  const sourceId = await uploadCsv(api, { token: account.token }, csv)
  return api.post("/api/v1/campaign/create", {
    name: "Big list",
    workflow_id: workflowId,
    source_type: "csv",
    source_id: sourceId
  }, {
    token: account.token
  })
}

const campaignOf = (account: TestAccount, id: number) =>
  api.get(`/api/v1/campaign/${id}`, { token: account.token }).then((reply) => reply.body)

const untilImportEnds = async (account: TestAccount, id: number) => {
  const deadline = Date.now() + 60_000
  while (Date.now() < deadline) {
    const campaign = await campaignOf(account, id)
    if (campaign.import.status !== "loading") return campaign
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`campaign ${id} still loading after a minute`)
}

/** A failed import's contacts are cleared in the background, a few thousand per statement. */
const untilCleared = async (account: TestAccount, id: number) => {
  const deadline = Date.now() + 60_000
  while ((await campaignOf(account, id)).import.contacts_loaded > 0) {
    if (Date.now() > deadline) throw new Error(`campaign ${id} still has contacts after a minute`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

const storedContacts = (campaignId: number) =>
  server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const [row] = yield* sql<
      { count: number }
    >`SELECT count(*)::int AS count FROM campaign_contacts WHERE campaign_id = ${campaignId}`
    return row!.count
  }))

/**
 * On PostgreSQL, holds back every import's next statement until released (they wait for a lock on
 * the contacts table while everything else goes on), so a test sees an import mid-way for sure.
 * The embedded database runs one transaction at a time, so there the files are simply large
 * enough to take a while.
 */
const holdImports = async () => {
  if (databaseKind() !== "postgres") return async () => undefined
  const locked = Effect.runSync(Deferred.make<void>())
  const release = Effect.runSync(Deferred.make<void>())
  const holder = server.run(Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.withTransaction(Effect.gen(function*() {
      yield* sql`LOCK TABLE campaign_contacts IN SHARE ROW EXCLUSIVE MODE`
      yield* Deferred.succeed(locked, undefined)
      yield* Deferred.await(release)
    }))
  }))
  await Effect.runPromise(Deferred.await(locked))
  return async () => {
    await Effect.runPromise(Deferred.succeed(release, undefined))
    await holder
  }
}

describe(`contact imports on ${databaseKind()}`, () => {
  it("answers a large file at once with the campaign loading, refuses to start it until every contact is stored, then runs it", async () => {
    const account = await newAccount(api)
    await newTelephony(api, { token: account.token })
    const release = await holdImports()
    const created = await create(account, contactsCsv(40_000))
    expect(created.status).toBe(200)
    expect(created.body).toMatchObject({
      state: "created",
      total_rows: null,
      import: { status: "loading", errors: [] }
    })
    expect(created.body.import.bytes_total).toBeGreaterThan(500_000)

    const early = await api.post(`/api/v1/campaign/${created.body.id}/start`, undefined, { token: account.token })
    expect(early.status).toBe(409)
    expect(early.body.detail).toMatch(
      /^Cannot start the campaign while its contacts are loading \([\d,]+ stored, \d+% of the file read\)/
    )
    const progress = await api.get(`/api/v1/campaign/${created.body.id}/progress`, { token: account.token })
    expect(progress.body).toMatchObject({ state: "created", pending: 0, import: { status: "loading" } })
    await release()

    const loaded = await untilImportEnds(account, created.body.id)
    expect(loaded).toMatchObject({
      state: "created",
      total_rows: 40_000,
      total_queued_count: 40_000,
      import: { status: "ready", contacts_loaded: 40_000, progress: 1, errors: [] }
    })
    expect(loaded.logs.map((entry: { event: string }) => entry.event)).toEqual(["contacts_imported"])
    expect(await storedContacts(created.body.id)).toBe(40_000)
    const started = await api.post(`/api/v1/campaign/${created.body.id}/start`, undefined, { token: account.token })
    expect(started.status).toBe(200)
    expect(started.body.state).toBe("running")
  })

  it("fails the import and the campaign with the reasons when a problem turns up after the answer, and clears what was stored", async () => {
    const account = await newAccount(api)
    const created = await create(account, contactsCsv(20_000, "+14159990000\n+14159990001,x,extra\n+14159990002\n"))
    expect(created.status).toBe(200)
    expect(created.body.import.status).toBe("loading")

    const failed = await untilImportEnds(account, created.body.id)
    expect(failed).toMatchObject({
      state: "failed",
      total_rows: null,
      import: { status: "failed", errors: ["Rows 20002, 20004: fewer fields than the header's 2 columns"] }
    })
    expect(failed.logs.at(-1)).toMatchObject({ level: "error", event: "contacts_import_failed" })
    await untilCleared(account, created.body.id)
    expect(await storedContacts(created.body.id)).toBe(0)
    const start = await api.post(`/api/v1/campaign/${created.body.id}/start`, undefined, { token: account.token })
    expect(start.status).toBe(409)
    expect(start.body.detail).toMatch(/that is failed/)
  })

  it("still answers 422 for a large file whose header is unusable, and keeps no campaign", async () => {
    const account = await newAccount(api)
    const reply = await create(account, contactsCsv(20_000).replace("phone_number", "telephone"))
    expect(reply.status).toBe(422)
    expect(reply.body.detail[0]).toMatchObject({ loc: ["body", "source_id"], type: "csv_invalid" })
    expect(reply.body.detail[0].msg).toMatch(/no "phone_number" column/)
    expect((await api.get("/api/v1/campaign/", { token: account.token })).body.total_count).toBe(0)
  })

  it("stops loading a campaign cancelled meanwhile and clears what was stored", async () => {
    const account = await newAccount(api)
    const release = await holdImports()
    const created = await create(account, contactsCsv(40_000))
    expect(created.body.import.status).toBe("loading")
    const cancelled = await api.post(`/api/v1/campaign/${created.body.id}/cancel`, undefined, { token: account.token })
    expect(cancelled.status).toBe(200)
    expect(cancelled.body).toMatchObject({
      state: "cancelled",
      import: { status: "failed", errors: ["The campaign was cancelled while its contacts were loading"] }
    })
    await release()
    await untilCleared(account, created.body.id)
    expect(await storedContacts(created.body.id)).toBe(0)
    expect((await campaignOf(account, created.body.id)).state).toBe("cancelled")
  })

  it("fails an import whose loading process went silent, and clears its contacts", async () => {
    const account = await newAccount(api)
    const created = await create(account, "phone_number,first_name\n+14155550101,Ann\n+14155550102,Bob\n")
    // As a process that died mid-import leaves it: loading under its name, its heartbeat long gone.
    await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`
        UPDATE campaigns SET import_status = 'loading', import_owner = 'gone-host:1:dead', total_rows = NULL,
                             import_heartbeat_at = now() - interval '5 minutes'
        WHERE id = ${created.body.id}`
      yield* (yield* ContactImports).sweep
    }))
    const swept = await campaignOf(account, created.body.id)
    expect(swept).toMatchObject({ state: "failed", import: { status: "failed", contacts_loaded: 0 } })
    expect(swept.import.errors[0]).toMatch(/The import stopped before the end of the file/)
    expect(await storedContacts(created.body.id)).toBe(0)
  })

  it("loads a small file before answering, as before", async () => {
    const account = await newAccount(api)
    const reply = await create(account, "phone_number,first_name\n+14155550101,Ann\n")
    expect(reply.body).toMatchObject({ total_rows: 1, import: { status: "ready", contacts_loaded: 1, progress: 1 } })
  })

  it("lets requests of other organizations through while a large file loads", async () => {
    const importer = await newAccount(api)
    const other = await newAccount(api)
    const created = await create(importer, contactsCsv(40_000))
    expect(created.body.import.status).toBe("loading")
    const latencies: Array<number> = []
    const reader = (async () => {
      while ((await campaignOf(importer, created.body.id)).import.status === "loading") {
        const started = performance.now()
        const reply = await api.get("/api/v1/campaign/", { token: other.token })
        expect(reply.status).toBe(200)
        latencies.push(performance.now() - started)
      }
    })()
    await reader
    expect(latencies.length).toBeGreaterThan(3)
    // Never a wait for the whole import (seconds), at most for a statement or a few of it.
    expect(Math.max(...latencies)).toBeLessThan(1500)
  })
})
