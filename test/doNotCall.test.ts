import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { databaseKind } from "./support/database.ts"
import { carrierTelephony, contactsCsv, eventually, numbersFrom, startedCampaign } from "./support/dialerFixtures.ts"
import { dialingServerForTests } from "./support/dialingServer.ts"
import { uploadCsv } from "./support/uploads.ts"
import { ensureVoiceModels } from "./support/voiceFixtures.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

const dialing = dialingServerForTests(400)
const { query, calledNumbers } = dialing

describe("the do-not-call list", () => {
  it("stores numbers in E.164 form with reason and source, pages and searches them, exports CSV, and removes them", async () => {
    const account = await newAccount(dialing.api)
    const auth = { token: account.token }
    const added = await dialing.api.post("/api/v1/organizations/dnc", {
      phone_number: "(415) 555-0199",
      default_region: "US",
      reason: "asked by letter"
    }, auth)
    expect(added.status).toBe(200)
    expect(added.body).toMatchObject({ phone_number: "+14155550199", reason: "asked by letter", source: "api" })
    for (const number of ["+14155550101", "+442071838750", "+14155550102"]) {
      expect((await dialing.api.post("/api/v1/organizations/dnc", { phone_number: number }, auth)).status).toBe(200)
    }
    const bad = await dialing.api.post("/api/v1/organizations/dnc", { phone_number: "12345" }, auth)
    expect(bad.status).toBe(422)

    const all = await dialing.api.get("/api/v1/organizations/dnc?limit=2", auth)
    expect(all.status).toBe(200)
    expect(all.body.total_count).toBe(4)
    expect(all.body.numbers).toHaveLength(2)
    const searched = await dialing.api.get("/api/v1/organizations/dnc?search=207183", auth)
    expect(searched.body.numbers.map((entry: { phone_number: string }) => entry.phone_number)).toEqual([
      "+442071838750"
    ])

    const exported = await fetch(`${dialing.server.url}/api/v1/organizations/dnc/export`, {
      headers: { authorization: `Bearer ${account.token}` }
    })
    expect(exported.headers.get("content-type")).toContain("text/csv")
    const lines = (await exported.text()).trim().split("\r\n")
    expect(lines[0]).toBe("phone_number,reason,source,created_at")
    // A cell starting with + is written '+…, as every talkgraph export writes it, so no spreadsheet runs it.
    expect(lines.slice(1).map((line) => line.split(",")[0])).toEqual([
      "'+14155550101",
      "'+14155550102",
      "'+14155550199",
      "'+442071838750"
    ])
    expect(lines.find((line) => line.startsWith("'+14155550199"))).toContain("asked by letter,api,")

    // Another organization sees nothing of it and cannot remove it.
    const other = await newAccount(dialing.api)
    expect((await dialing.api.get("/api/v1/organizations/dnc", { token: other.token })).body.total_count).toBe(0)
    expect((await dialing.api.delete("/api/v1/organizations/dnc/%2B14155550199", { token: other.token })).status).toBe(
      404
    )
    const readOnly = await newApiKey(dialing.api, account, ["campaigns:read"])
    expect(
      (await dialing.api.post("/api/v1/organizations/dnc", { phone_number: "+14155550103" }, { apiKey: readOnly }))
        .status
    )
      .toBe(403)

    expect((await dialing.api.delete("/api/v1/organizations/dnc/%2B14155550199", auth)).status).toBe(200)
    expect((await dialing.api.delete("/api/v1/organizations/dnc/%2B14155550199", auth)).status).toBe(404)
    expect((await dialing.api.get("/api/v1/organizations/dnc", auth)).body.total_count).toBe(3)
  })

  it("imports a CSV through the upload flow with the contacts' rules, keeping listed numbers and warning of bad rows", async () => {
    const account = await newAccount(dialing.api)
    const auth = { token: account.token }
    await dialing.api.post("/api/v1/organizations/dnc", { phone_number: "+14155550301", reason: "first" }, auth)
    const csv =
      "phone_number,reason\n+14155550301,again\n(415) 555-0302,stop\nnot a number,\n415-555-0303,\n415-555-0303,twice\n"
    const sourceId = await uploadCsv(dialing.api, auth, csv)
    const imported = await dialing.api.post(
      "/api/v1/organizations/dnc/import",
      { source_id: sourceId, default_region: "US" },
      auth
    )
    expect(imported.status).toBe(200)
    expect(imported.body).toEqual({
      imported: 2,
      already_listed: 2,
      warnings: ["1 rows skipped: invalid phone number"]
    })
    const listed = await dialing.api.get("/api/v1/organizations/dnc", auth)
    const byNumber = new Map(
      listed.body.numbers.map((entry: { phone_number: string }) => [entry.phone_number, entry] as const)
    )
    expect(byNumber.get("+14155550301")).toMatchObject({ reason: "first", source: "api" })
    expect(byNumber.get("+14155550302")).toMatchObject({ reason: "stop", source: "csv_import" })
    expect(byNumber.get("+14155550303")).toMatchObject({ reason: null, source: "csv_import" })

    const other = await newAccount(dialing.api)
    const foreign = await dialing.api.post("/api/v1/organizations/dnc/import", { source_id: sourceId }, {
      token: other.token
    })
    expect(foreign.status).toBe(422)
    const noHeader = await uploadCsv(dialing.api, auth, "number\n+14155550304\n")
    const refused = await dialing.api.post("/api/v1/organizations/dnc/import", { source_id: noHeader }, auth)
    expect(refused.status).toBe(422)
    expect((await dialing.api.get("/api/v1/organizations/dnc", auth)).body.total_count).toBe(3)
  })

  it.skipIf(databaseKind() === "pglite")(
    "completes an import when another request lists one of its numbers while it runs",
    async () => {
      const account = await newAccount(dialing.api)
      const auth = { token: account.token }
      const sourceId = await uploadCsv(dialing.api, auth, "phone_number\n+14155550401\n+14155550402\n+14155550403\n")
      // Another transaction lists one of the file's numbers and commits only once the import waits on it.
      const listing = query((sql) =>
        sql.withTransaction(Effect.gen(function*() {
          yield* sql`INSERT INTO do_not_call_numbers (organization_id, phone_number, reason, source)
                     VALUES (${account.organizationId}, '+14155550402', 'meanwhile', 'api')`
          yield* Effect.sleep(1500)
          return []
        }))
      )
      await new Promise((resolve) => setTimeout(resolve, 300))
      const imported = await dialing.api.post("/api/v1/organizations/dnc/import", { source_id: sourceId }, auth)
      await listing
      expect(imported.status).toBe(200)
      expect(imported.body).toEqual({ imported: 2, already_listed: 1, warnings: [] })
      const listed = (await dialing.api.get("/api/v1/organizations/dnc", auth)).body.numbers
      expect(listed.map((entry: { phone_number: string; source: string }) => [entry.phone_number, entry.source]))
        .toEqual([["+14155550401", "csv_import"], ["+14155550402", "api"], ["+14155550403", "csv_import"]])
    }
  )

  it("keeps a campaign from dialling listed numbers: skipped at import with a warning, and at claim time when listed mid-campaign", async () => {
    const account = await newAccount(dialing.api)
    const auth = { token: account.token }
    await carrierTelephony(dialing.api, auth, dialing.carrier)
    const numbers = numbersFrom("+1415620", 8)
    // Listed before the import: skipped there.
    await dialing.api.post("/api/v1/organizations/dnc", { phone_number: numbers[1]! }, auth)
    const id = await startedCampaign(dialing.server, dialing.api, account, contactsCsv(numbers), {
      rate_limit_per_second: 1,
      max_concurrency: 1
    })
    const created = (await dialing.api.get(`/api/v1/campaign/${id}`, auth)).body
    expect(created.warnings).toContain("1 row skipped: number on the do-not-call list (row 3)")

    // Listed once the campaign dials: never called afterwards.
    await eventually(async () => calledNumbers().includes(numbers[0]!), 15_000, "first call placed")
    for (const number of numbers.slice(5)) {
      expect(
        (await dialing.api.post("/api/v1/organizations/dnc", { phone_number: number, reason: "said stop" }, auth))
          .status
      )
        .toBe(200)
    }
    const done = await eventually(
      async () => {
        const progress = (await dialing.api.get(`/api/v1/campaign/${id}/progress`, auth)).body
        return progress.state === "completed" ? progress : undefined
      },
      30_000,
      "campaign completed"
    )
    const called = calledNumbers().filter((number) => numbers.includes(number))
    expect(called).not.toContain(numbers[1])
    for (const number of numbers.slice(5)) expect(called).not.toContain(number)
    expect(new Set(called)).toEqual(new Set([numbers[0], numbers[2], numbers[3], numbers[4]]))
    expect(done).toMatchObject({ completed: 4, skipped: 4, skipped_reasons: { dnc: 4, frequency_cap: 0 } })

    const report = await fetch(`${dialing.server.url}/api/v1/campaign/${id}/report`, {
      headers: { authorization: `Bearer ${account.token}` }
    })
    const rows = (await report.text()).trim().split("\r\n").slice(1).map((line) => line.split(","))
    expect(rows.filter((row) => row[2] === "skipped").map((row) => [row[1], row[4]])).toEqual(
      [numbers[1], ...numbers.slice(5)].map((number) => [`'${number}`, "dnc"])
    )
  })

  it("refuses a single call to a listed number with 409, and lists a number whose call ended with the disposition dnc", async () => {
    const account = await newAccount(dialing.api)
    await carrierTelephony(dialing.api, { token: account.token }, dialing.carrier)
    await ensureVoiceModels(dialing.api, { token: account.token })
    const workflowId = await insertWorkflow(dialing.server, account.organizationId, { variables: [] })
    const key = await newApiKey(dialing.api, account, [
      "calls:write",
      "calls:read",
      "campaigns:write",
      "campaigns:read"
    ])
    await dialing.api.post("/api/v1/organizations/dnc", { phone_number: "+14155550401" }, { apiKey: key })
    const refused = await dialing.api.post("/api/v2/calls", { agent_id: workflowId, phone_number: "+14155550401" }, {
      apiKey: key
    })
    expect(refused.status).toBe(409)
    expect(refused.body.error.message).toContain("do-not-call list")
    expect(calledNumbers()).not.toContain("+14155550401")

    const placed = await dialing.api.post("/api/v2/calls", { agent_id: workflowId, phone_number: "+14155550402" }, {
      apiKey: key
    })
    expect(placed.status).toBe(201)
    const runId = await eventually(async () =>
      (await dialing.api.get(`/api/v2/calls/${placed.body.data.id}`, { apiKey: key })).body.data.run_id
    )
    // What the conversation engine writes when the callee asks not to be called again.
    await query((sql) => sql`UPDATE runs SET disposition = 'dnc' WHERE id = ${runId}`)
    const listed = await dialing.api.get("/api/v1/organizations/dnc?search=4155550402", { apiKey: key })
    expect(listed.body.numbers).toMatchObject([{ phone_number: "+14155550402", source: "disposition" }])
    const again = await dialing.api.post("/api/v2/calls", { agent_id: workflowId, phone_number: "+14155550402" }, {
      apiKey: key
    })
    expect(again.status).toBe(409)
  })
})
