import type { SqlClient } from "@effect/sql"
import { Effect, Fiber } from "effect"
import { type Contact, CsvContactsInvalid, type CsvContactsOptions, type CsvContactsSummary, readContacts } from "../../src/campaign/csvContacts.ts"

/** One statement per batch: the batch travels as a single JSON parameter and is unpacked by the database. */
const insertBatch = (sql: SqlClient.SqlClient, campaignId: number, batch: ReadonlyArray<Contact>) =>
  sql`
    INSERT INTO campaign_contacts (campaign_id, row_number, phone_number, context, greeting_override)
    SELECT ${campaignId}, r.row_number, r.phone_number, r.context, r.greeting_override
    FROM json_to_recordset(${JSON.stringify(
    batch.map((contact) => ({
      row_number: contact.row,
      phone_number: contact.phone_number,
      context: contact.context,
      greeting_override: contact.greeting_override
    }))
  )}::json)
      AS r(row_number integer, phone_number text, context jsonb, greeting_override jsonb)`

/**
 * Streams a contacts CSV into `campaign_contacts`. The next batch is parsed while the previous
 * one is being inserted, so the CPU work of parsing overlaps the database's. Runs inside the
 * caller's transaction: a CSV found invalid halfway leaves nothing behind.
 */
export const ingestContacts = (
  sql: SqlClient.SqlClient,
  campaignId: number,
  source: AsyncIterable<Uint8Array | string>,
  options: CsvContactsOptions
): Effect.Effect<CsvContactsSummary, CsvContactsInvalid> =>
  Effect.gen(function* () {
    const batches = readContacts(source, options)
    let inFlight: Fiber.Fiber<unknown, unknown> | undefined
    while (true) {
      const next = yield* Effect.tryPromise({
        try: () => batches.next(),
        catch: (error) => error
      }).pipe(
        Effect.catchAll((error) => (error instanceof CsvContactsInvalid ? Effect.fail(error) : Effect.die(error)))
      )
      if (inFlight) yield* Fiber.join(inFlight).pipe(Effect.orDie)
      if (next.done) return next.value
      inFlight = yield* Effect.fork(insertBatch(sql, campaignId, next.value))
    }
  })
