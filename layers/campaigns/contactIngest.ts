import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Effect, Fiber, Option } from "effect"
import pg from "pg"
import { contactCopyColumns, contactCopyRows } from "../../src/campaign/contactCopyRows.ts"
import { type Contact, CsvContactsInvalid, type CsvContactsOptions, type CsvContactsSummary, readContacts } from "../../src/campaign/csvContacts.ts"

/** Contacts are read in small batches, each turned into statement data at once and let go of. */
const READ_BATCH_ROWS = 500
/** Rows per statement: enough that the database's work per statement is noise. */
const STATEMENT_ROWS = 5000

/**
 * Collects contacts into the payload of the next statement. The contacts themselves are not kept:
 * objects that lived until their statement ran would outlive the garbage collector's young
 * generation, and a million rows of them made the heap swell by hundreds of megabytes.
 */
interface ContactWriter {
  readonly add: (batch: ReadonlyArray<Contact>) => void
  /** Rows added since the last `take`. */
  readonly pending: () => number
  /** Hands over the rows added so far, as one statement to run. */
  readonly take: () => Effect.Effect<void, SqlError>
}

/** One INSERT per statement: the rows travel as a single JSON parameter, unpacked by the database. */
const insertWriter = (sql: SqlClient.SqlClient, campaignId: number): ContactWriter => {
  let parts: Array<string> = []
  let rows = 0
  return {
    add: (batch) => {
      if (batch.length === 0) return
      const json = JSON.stringify(batch.map((contact) => ({
        row_number: contact.row,
        phone_number: contact.phone_number,
        context: contact.context,
        greeting_override: contact.greeting_override
      })))
      parts.push(json.slice(1, -1))
      rows += batch.length
    },
    pending: () => rows,
    take: () => {
      const json = `[${parts.join(",")}]`
      parts = []
      rows = 0
      return sql`
        INSERT INTO campaign_contacts (campaign_id, row_number, phone_number, context, greeting_override)
        SELECT ${campaignId}, r.row_number, r.phone_number, r.context, r.greeting_override
        FROM json_to_recordset(${json}::json)
          AS r(row_number integer, phone_number text, context jsonb, greeting_override jsonb)`.pipe(Effect.asVoid)
    }
  }
}

/** What a COPY needs of node-postgres's connection; its typings leave the copy messages out. */
interface CopyConnection {
  query(text: string): void
  sendCopyFromChunk(chunk: Buffer): void
  endCopyFrom(): void
}

/**
 * One `COPY … FROM STDIN` whose data is known up front, as a node-postgres "submittable": the
 * client hands it the connection when its turn in the queue comes, then feeds it the replies.
 */
class CopyFromStdin implements pg.Submittable {
  private readonly statement: string
  private readonly data: ReadonlyArray<Buffer>
  private settle: ((error: unknown) => void) | undefined

  constructor(statement: string, data: ReadonlyArray<Buffer>, settle: (error: unknown) => void) {
    this.statement = statement
    this.data = data
    this.settle = settle
  }

  submit(connection: pg.Connection) {
    ;(connection as unknown as CopyConnection).query(this.statement)
  }

  handleCopyInResponse(connection: CopyConnection) {
    for (const chunk of this.data) connection.sendCopyFromChunk(chunk)
    connection.endCopyFrom()
  }

  handleError(error: unknown) {
    this.finish(error)
  }

  handleReadyForQuery() {
    this.finish(undefined)
  }

  handleCommandComplete() {}
  handleRowDescription() {}
  handleDataRow() {}
  handleEmptyQuery() {}
  handlePortalSuspended() {}
  handleCopyData() {}

  private finish(error: unknown) {
    const settle = this.settle
    this.settle = undefined
    settle?.(error)
  }
}

const copyStatement = `COPY campaign_contacts (${contactCopyColumns.join(", ")}) FROM STDIN`

const copyWriter = (client: pg.ClientBase, campaignId: number): ContactWriter => {
  let chunks: Array<Buffer> = []
  let rows = 0
  return {
    add: (batch) => {
      chunks.push(contactCopyRows(campaignId, batch))
      rows += batch.length
    },
    pending: () => rows,
    take: () => {
      const data = chunks
      const count = rows
      chunks = []
      rows = 0
      return Effect.async<void, SqlError>((resume) => {
        client.query(
          new CopyFromStdin(copyStatement, data, (error) =>
            resume(error === undefined ? Effect.void : Effect.fail(new SqlError({ cause: error, message: "Failed to copy contacts" }))))
        )
      }).pipe(Effect.withSpan("ContactIngest.copy", { attributes: { rows: count } }))
    }
  }
}

/**
 * COPY takes rows several times faster than INSERT, but it has to run on the caller's transaction
 * connection, so it needs that connection's node-postgres client (an @effect/sql-pg detail, checked
 * here rather than trusted). PGlite's socket server cannot take COPY FROM STDIN (it drops the
 * connection), so there, and outside a transaction, rows go in by INSERT.
 */
const contactWriter = (sql: SqlClient.SqlClient, campaignId: number, onPostgres: boolean) =>
  Effect.map(Effect.serviceOption(SqlClient.TransactionConnection), (transaction) => {
    const client = Option.flatMap(transaction, ([connection]) => {
      const raw: unknown = (connection as { readonly pg?: unknown }).pg
      return raw instanceof pg.Client ? Option.some(raw) : Option.none()
    })
    return onPostgres && Option.isSome(client) ? copyWriter(client.value, campaignId) : insertWriter(sql, campaignId)
  })

/**
 * Parsing a chunk of the file runs as one long chain of promise callbacks, during which Node
 * handles no socket events, so the database's "ready for the next statement" would wait for the
 * whole chunk. A turn of the event loop between batches lets it through at once.
 */
const eventLoopTurn = Effect.async<void>((resume) => {
  const immediate = setImmediate(() => resume(Effect.void))
  return Effect.sync(() => clearImmediate(immediate))
})

/**
 * Streams a contacts CSV into `campaign_contacts`. Rows are parsed while the previous statement
 * runs, so the CPU work of parsing overlaps the database's, and each statement is queued on the
 * connection before the previous one is awaited, so the database goes straight from one to the
 * next. Statements on one connection run in the order sent, which keeps contacts in CSV order.
 * Runs inside the caller's transaction: a CSV found invalid halfway leaves nothing behind.
 */
export const ingestContacts = (
  sql: SqlClient.SqlClient,
  campaignId: number,
  source: AsyncIterable<Uint8Array | string>,
  options: CsvContactsOptions,
  /** PostgreSQL proper (`DATABASE_URL`), rather than the embedded PGlite. */
  onPostgres: boolean
): Effect.Effect<CsvContactsSummary, CsvContactsInvalid> =>
  Effect.gen(function* () {
    const writer = yield* contactWriter(sql, campaignId, onPostgres)
    const batches = readContacts(source, { ...options, batchSize: READ_BATCH_ROWS })
    let inFlight: Fiber.Fiber<void, SqlError> | undefined
    while (true) {
      const next = yield* Effect.tryPromise({
        try: () => batches.next(),
        catch: (error) => error
      }).pipe(
        Effect.catchAll((error) => (error instanceof CsvContactsInvalid ? Effect.fail(error) : Effect.die(error)))
      )
      if (!next.done) {
        writer.add(next.value)
        yield* eventLoopTurn
        if (writer.pending() < STATEMENT_ROWS) continue
      }
      const queued = writer.pending() > 0 ? yield* Effect.fork(writer.take()) : undefined
      if (inFlight) yield* Fiber.join(inFlight).pipe(Effect.orDie)
      inFlight = queued
      if (next.done) {
        if (inFlight) yield* Fiber.join(inFlight).pipe(Effect.orDie)
        return next.value
      }
    }
  })
