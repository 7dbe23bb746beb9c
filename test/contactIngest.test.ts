import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Contact, readContacts } from "../src/campaigns/csvContacts.ts"
import { newAccount } from "./support/accounts.ts"
import { type Client, client } from "./support/client.ts"
import { databaseKind } from "./support/database.ts"
import { type RunningServer, startServer } from "./support/server.ts"
import { uploadCsv } from "./support/uploads.ts"
import { insertWorkflow } from "./support/workflowRows.ts"

let server: RunningServer
let api: Client

beforeAll(async () => {
  server = await startServer()
  api = client(server.url)
})
afterAll(() => server?.close())

/**
 * Contexts with everything COPY's text format would misread unescaped (backslashes, tabs, line
 * breaks, a literal `\N`), spread over more than two batches so writes overlap parsing.
 */
const awkwardCsv = () => {
  const lines = ["phone_number,first_name,note,greeting_override_type,greeting_override_text"]
  for (let i = 0; i < 12_000; i++) {
    const note = [
      `"tab\there"`,
      `"back\\slash \\N and \\\\ two"`,
      `"line one\nline two\r\nthree"`,
      `"quote "" and , comma"`,
      `Zoë Ødegård 日本 🎉`,
      ``,
      `\\N`
    ][i % 7]!
    const greeting = i % 5 === 0 ? `text,"Hi {{first_name}} \\ \t!"` : ","
    lines.push(
      `+1 (415) ${200 + Math.floor(i / 10_000)}-${String(i % 10_000).padStart(4, "0")},Name${i},${note},${greeting}`
    )
  }
  return `${lines.join("\r\n")}\r\n`
}

const parsed = async (csv: string) => {
  const contacts: Array<Contact> = []
  const source = (async function*() {
    yield new TextEncoder().encode(csv)
  })()
  for await (const batch of readContacts(source, { defaultRegion: undefined, requiredColumns: [] })) {
    contacts.push(...batch)
  }
  return contacts
}

const createCampaign = async (csv: string) => {
  const account = await newAccount(api)
  const workflowId = await insertWorkflow(server, account.organizationId)
  const sourceId = await uploadCsv(api, { token: account.token }, csv)
  const reply = await api.post(
    "/api/v1/campaign/create",
    { name: "Ingest", workflow_id: workflowId, source_type: "csv", source_id: sourceId },
    { token: account.token }
  )
  return { account, reply }
}

/** The campaign once its contacts are all loaded (a large file loads after the create answers). */
const loaded = async (account: { readonly token: string }, created: any) => {
  let campaign = created
  while (campaign.import.status === "loading") {
    await new Promise((resolve) => setTimeout(resolve, 50))
    campaign = (await api.get(`/api/v1/campaign/${campaign.id}`, { token: account.token })).body
  }
  return campaign
}

describe(`contact ingest into ${databaseKind()}`, () => {
  it("stores every contact exactly as parsed: row, E.164 number, context and greeting override", async () => {
    const csv = awkwardCsv()
    const { reply } = await createCampaign(csv)
    expect(reply.status).toBe(200)
    const stored = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ row_number: number; phone_number: string; context: unknown; greeting_override: unknown }>`
        SELECT row_number, phone_number, context, greeting_override FROM campaign_contacts
        WHERE campaign_id = ${reply.body.id} ORDER BY id`
    }))
    const expected = (await parsed(csv)).map((contact) => ({
      row_number: contact.row,
      phone_number: contact.phone_number,
      context: contact.context,
      greeting_override: contact.greeting_override
    }))
    expect(expected).toHaveLength(12_000)
    expect(stored).toEqual(expected)
  })

  it("keeps the first row of a repeated number, across statements too, and names the skipped rows", async () => {
    // 12,000 rows over several statements; rows 10,002 on repeat the numbers of rows 2 on, written
    // as the spreadsheet would, and two rows repeat a number within the same few lines.
    const number = (i: number) => `+1415200${String(i).padStart(4, "0")}`
    const rows = Array.from({ length: 12_000 }, (_, i) => (i < 10_000 ? number(i) : number(i - 10_000)))
    rows[20] = number(19)
    rows[21] = number(19)
    const { account, reply } = await createCampaign(
      `phone_number,name\n${rows.map((row, i) => `${row},n${i}`).join("\n")}\n`
    )
    expect(reply.status).toBe(200)
    const campaign = await loaded(account, reply.body)
    const stored = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ rows: number; distinct_numbers: number; first_row: number }>`
        SELECT count(*)::int AS rows, count(DISTINCT phone_number)::int AS distinct_numbers,
               min(row_number) FILTER (WHERE phone_number = ${number(19)}) AS first_row
        FROM campaign_contacts WHERE campaign_id = ${campaign.id}`
    }))
    // 10,000 numbers (those of rows 22 and 23 first appear at rows 10022 and 10023); 2,000 rows repeat one.
    expect(stored).toEqual([{ rows: 10_000, distinct_numbers: 10_000, first_row: 21 }])
    expect(campaign.total_rows).toBe(10_000)
    expect(campaign.warnings).toEqual([
      "2000 rows skipped: duplicate phone number (rows 22, 23, 10002, 10003, 10004 and 1995 more)"
    ])
  })

  it("stores a number once when it fills whole statements, and the numbers after it", async () => {
    // 8,000 rows of one number: at least one statement holds nothing but repeats of it.
    const rows = [
      ...Array.from({ length: 8_000 }, () => "+14152001111"),
      "+14152002222",
      "+1 415 200 1111",
      "+14152003333"
    ]
    const { account, reply } = await createCampaign(`phone_number\n${rows.join("\n")}\n`)
    expect(reply.status).toBe(200)
    const campaign = await loaded(account, reply.body)
    const stored = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ row_number: number; phone_number: string }>`
        SELECT row_number, phone_number FROM campaign_contacts WHERE campaign_id = ${campaign.id} ORDER BY id`
    }))
    expect(stored).toEqual([
      { row_number: 2, phone_number: "+14152001111" },
      { row_number: 8002, phone_number: "+14152002222" },
      { row_number: 8004, phone_number: "+14152003333" }
    ])
    expect(campaign.total_rows).toBe(3)
    expect(campaign.warnings).toEqual([
      "8000 rows skipped: duplicate phone number (rows 3, 4, 5, 6, 7 and 7995 more)"
    ])
  })

  it("leaves nothing behind when a problem turns up after thousands of contacts were written", async () => {
    const rows = Array.from(
      { length: 11_000 },
      (_, i) => `+1415${200 + Math.floor(i / 10_000)}${String(i % 10_000).padStart(4, "0")},a`
    )
    const { account, reply } = await createCampaign(`phone_number,name\n${rows.join("\n")}\n+14159990000\n`)
    expect(reply.status).toBe(422)
    expect(JSON.stringify(reply.body)).toContain("Row 11002: fewer fields than the header's 2 columns")
    // Contacts cannot outlive their campaign (foreign key), so no campaign means no contacts.
    const left = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ campaigns: number }>`
        SELECT count(*)::int AS campaigns FROM campaigns WHERE organization_id = ${account.organizationId}`
    }))
    expect(left).toEqual([{ campaigns: 0 }])
  })

  it("takes the replica role back once an import's statements ran: foreign keys hold again for everyone", async () => {
    const rows = Array.from({ length: 3_000 }, (_, i) => `+1415300${String(i).padStart(4, "0")},n${i}`)
    const { account, reply } = await createCampaign(`phone_number,name\n${rows.join("\n")}\n`)
    expect(reply.status).toBe(200)
    expect((await loaded(account, reply.body)).total_rows).toBe(3_000)
    const after = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [role] = yield* sql<{ role: string }>`SELECT current_setting('session_replication_role') AS role`
      const orphan = yield* sql`
        INSERT INTO campaign_contacts (campaign_id, row_number, phone_number) VALUES (-1, 1, '+14155550100')`.pipe(
        Effect.as("stored"),
        Effect.catchAll((error) => Effect.succeed(String(error.cause)))
      )
      return { role: role!.role, orphan }
    }))
    expect(after.role).toBe("origin")
    expect(after.orphan).toMatch(/foreign key/)
  })

  it("has no triggers on contacts beyond the foreign keys' own, which the embedded import's insert skips", async () => {
    // The embedded database inserts contacts with session_replication_role = replica (contactIngest.ts):
    // a trigger added to campaign_contacts would not fire for imported contacts.
    const triggers = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ name: string }>`
        SELECT tgname AS name FROM pg_trigger WHERE tgrelid = 'campaign_contacts'::regclass AND NOT tgisinternal`
    }))
    expect(triggers).toEqual([])
  })

  it("has no trigger on campaigns that an import's progress update would fire, which the embedded import skips", async () => {
    // The same statement, still in the replica role, counts the contacts into the campaign's
    // import_* columns: a trigger on any update of campaigns, or on those columns, would not fire.
    const triggers = await server.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ name: string; columns: ReadonlyArray<string> }>`
        SELECT t.tgname AS name,
               ARRAY(SELECT a.attname FROM unnest(t.tgattr) AS k (attnum)
                     JOIN pg_attribute a ON a.attrelid = t.tgrelid AND a.attnum = k.attnum ORDER BY 1)::text[] AS columns
        FROM pg_trigger t
        WHERE t.tgrelid = 'campaigns'::regclass AND NOT t.tgisinternal AND (t.tgtype & 16) <> 0
        ORDER BY 1`
    }))
    expect(triggers.length).toBeGreaterThan(0)
    for (const trigger of triggers) {
      expect(trigger.columns, trigger.name).not.toEqual([])
      expect(trigger.columns.filter((column) => column.startsWith("import_")), trigger.name).toEqual([])
    }
  })
})
