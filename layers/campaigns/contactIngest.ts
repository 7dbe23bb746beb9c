import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { Clock, Context, Data, Effect, Fiber } from "effect"
import { contactCopyColumns, contactCopyRows } from "../../src/campaigns/contactCopyRows.ts"
import { nextStatementRows } from "../../src/campaigns/contactImport.ts"
import {
  type Contact,
  CsvContactsInvalid,
  type CsvContactsOptions,
  type CsvContactsSummary,
  readContacts
} from "../../src/campaigns/csvContacts.ts"
import { copyFromStdin } from "../db/copyFromStdin.ts"

/** Contacts are read in small batches, each turned into statement data at once and let go of. */
const READ_BATCH_ROWS = 250
/** Rows per COPY on PostgreSQL: enough that the database's work per statement is noise. */
const COPY_ROWS = 5000
/** How often a PostgreSQL import records its progress (and finds out whether it was cancelled). */
const PROGRESS_EVERY_MS = 2000
/**
 * Rows per INSERT on the embedded database are sized so that a statement takes about this long
 * from sending to answer (of which the backend's own work, what another request's statement may
 * wait for, is a part: 1,000 contacts take it 12–25 ms). Its one backend runs nothing else meanwhile.
 */
const EMBEDDED_STATEMENT_MS = 30
const EMBEDDED_ROWS = { min: 1000, max: 5000 }
/**
 * Before each statement the import lets requests' statements go first, for at most this long, so
 * that it always advances under any load.
 */
const MAX_DEFER_MS = 50
/** Quiet time after requests' statements before the import takes the database again. */
const REQUEST_GAP_MS = 3

/** The import is no longer this loader's: the campaign was cancelled, or its import failed meanwhile. */
export class ImportTakenOver extends Data.TaggedError("ImportTakenOver")<{}> {}

/** Whose import the statements write into, and how far through the file they are. */
interface ImportTarget {
  readonly campaignId: number
  /** The loading process; a statement writes only while the import is still loading under it. */
  readonly owner: string
  readonly bytesRead: () => number
  /** Whether requests' statements contend for the database now. */
  readonly contended: Effect.Effect<boolean>
}

/**
 * Collects contacts into the payload of the next statement. The contacts themselves are not kept:
 * objects that lived until their statement ran would outlive the garbage collector's young
 * generation, and a million rows of them made the heap swell by hundreds of megabytes.
 */
interface ContactWriter {
  readonly add: (batch: ReadonlyArray<Contact>) => void
  /** Rows added since the last `take`. */
  readonly pending: () => number
  /** Rows the next statement should carry. */
  readonly statementRows: () => number
  /** Stores the rows added so far in one statement; the number of rows it carried. */
  readonly take: () => Effect.Effect<number, SqlError | ImportTakenOver>
}

/**
 * One statement per transaction: the rows travel as a single JSON parameter, unpacked by the
 * database, and only while the import is still loading under this loader; the same statement
 * counts them into the campaign's progress.
 */
const insertWriter = (sql: SqlClient.SqlClient, target: ImportTarget): ContactWriter => {
  let parts: Array<string> = []
  let rows = 0
  let statementRows = EMBEDDED_ROWS.min
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
    statementRows: () => statementRows,
    take: () => {
      const json = `[${parts.join(",")}]`
      const count = rows
      parts = []
      rows = 0
      return Effect.gen(function*() {
        const started = performance.now()
        const updated = yield* sql<{ id: number }>`
          WITH live AS (
            SELECT id FROM campaigns
            WHERE id = ${target.campaignId} AND import_status = 'loading' AND import_owner = ${target.owner}
            FOR UPDATE
          ), stored AS (
            INSERT INTO campaign_contacts (campaign_id, row_number, phone_number, context, greeting_override)
            SELECT live.id, r.row_number, r.phone_number, r.context, r.greeting_override
            FROM live, json_to_recordset(${json}::json)
              AS r(row_number integer, phone_number text, context jsonb, greeting_override jsonb)
            RETURNING 1
          )
          UPDATE campaigns c
          SET import_contacts = c.import_contacts + (SELECT count(*) FROM stored)::int,
              import_bytes_read = ${target.bytesRead()}, import_heartbeat_at = now()
          FROM live WHERE c.id = live.id
          RETURNING c.id`
        if (updated.length === 0) return yield* new ImportTakenOver()
        statementRows = nextStatementRows(count, performance.now() - started, EMBEDDED_STATEMENT_MS, EMBEDDED_ROWS)
        return count
      })
    }
  }
}

const copyStatement = `COPY campaign_contacts (${contactCopyColumns.join(", ")}) FROM STDIN`

/**
 * PostgreSQL: rows go in by `COPY … FROM STDIN`, several times faster than INSERT, on the
 * transaction's node-postgres client (an @effect/sql-pg detail, checked here rather than trusted).
 */
const copyWriter = (target: ImportTarget): ContactWriter => {
  let chunks: Array<Buffer> = []
  let rows = 0
  const copy = (data: ReadonlyArray<Buffer>) => copyFromStdin(copyStatement, data, "Failed to copy contacts")
  return {
    add: (batch) => {
      chunks.push(contactCopyRows(target.campaignId, batch))
      rows += batch.length
    },
    pending: () => rows,
    statementRows: () => COPY_ROWS,
    take: () => {
      const data = chunks
      const count = rows
      chunks = []
      rows = 0
      return copy(data).pipe(Effect.as(count), Effect.withSpan("ContactIngest.copy", { attributes: { rows: count } }))
    }
  }
}

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
 * Waits while requests use the database, and a little after, since a request's statements come one
 * after another with a moment of its own work between them: once it is under way it can run them
 * all. Never longer than MAX_DEFER_MS, so that the import always advances.
 */
const deferToRequests = (contended: Effect.Effect<boolean>) =>
  Effect.gen(function*() {
    if (!(yield* contended)) return
    const until = (yield* Clock.currentTimeMillis) + MAX_DEFER_MS
    let quietSince: number | undefined
    while (true) {
      const now = yield* Clock.currentTimeMillis
      if (now >= until) return
      if (yield* contended) quietSince = undefined
      else if (quietSince === undefined) quietSince = now
      else if (now - quietSince >= REQUEST_GAP_MS) return
      yield* Effect.sleep("1 millis")
    }
  })

/** Runs on a connection of its own, even where the caller is inside a transaction. */
const outsideTransaction = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.mapInputContext(
    effect,
    (context: Context.Context<never>) => Context.omit(SqlClient.TransactionConnection)(context)
  )

/**
 * The loop both databases share: the next rows are parsed while the last statement runs, and each
 * statement is reported to `stored` once it has run. `pipelined` sends the next statement before
 * the last one answered (on one connection they still run in order, which keeps contacts in CSV
 * order); otherwise one at a time, each after the requests that wait.
 */
const load = (
  writer: ContactWriter,
  source: AsyncIterable<Uint8Array | string>,
  options: CsvContactsOptions,
  turn: {
    readonly pipelined: boolean
    readonly contended: Effect.Effect<boolean>
    readonly stored: (rows: number) => Effect.Effect<void, SqlError | ImportTakenOver>
  }
): Effect.Effect<CsvContactsSummary, CsvContactsInvalid | ImportTakenOver | SqlError> =>
  Effect.gen(function*() {
    const batches = readContacts(source, { ...options, batchSize: READ_BATCH_ROWS })
    let inFlight: Fiber.Fiber<number, SqlError | ImportTakenOver> | undefined
    const settle = Effect.suspend(() => (inFlight ? Effect.flatMap(Fiber.join(inFlight), turn.stored) : Effect.void))
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
        if (writer.pending() < writer.statementRows()) continue
      }
      if (!turn.pipelined) {
        yield* settle
        if (writer.pending() > 0) yield* deferToRequests(turn.contended)
      }
      const queued = writer.pending() > 0 ? yield* Effect.fork(writer.take()) : undefined
      if (turn.pipelined) yield* settle
      inFlight = queued
      if (next.done) {
        yield* settle
        return next.value
      }
    }
  })

/**
 * Streams a contacts CSV into `campaign_contacts` while the campaign's import is loading under
 * `target.owner`, recording how far it got; fails with ImportTakenOver once it no longer is.
 *
 * On the embedded database, whose single backend runs one transaction at a time for everyone, each
 * statement is a transaction of its own (which itself checks the import is still this loader's
 * and counts its rows), sent only after the requests waiting for the database: nothing holds the
 * backend for long. What was stored before a problem or a cancel is for the caller to clear.
 *
 * On PostgreSQL, where a transaction blocks nobody, the whole file goes in one transaction of
 * pipelined COPYs, its progress recorded beside it on another connection: taken over, it rolls
 * back and leaves nothing.
 */
export const ingestContacts = (
  sql: SqlClient.SqlClient,
  target: ImportTarget,
  source: AsyncIterable<Uint8Array | string>,
  options: CsvContactsOptions,
  /** PostgreSQL proper (`DATABASE_URL`), rather than the embedded PGlite. */
  onPostgres: boolean
): Effect.Effect<CsvContactsSummary, CsvContactsInvalid | ImportTakenOver | SqlError> => {
  if (!onPostgres) {
    return load(insertWriter(sql, target), source, options, {
      pipelined: false,
      contended: target.contended,
      stored: () => Effect.void
    })
  }
  // Outside the import's transaction, so that it is seen while the import runs, and only every
  // PROGRESS_EVERY_MS: each update of the campaign row, which every copied contact's foreign key
  // has locked (key share) in the import's transaction, makes a multixact the next copies read.
  let unrecorded = 0
  let recordedAt = 0
  const recordProgress = (rows: number) =>
    Effect.gen(function*() {
      unrecorded += rows
      const now = yield* Clock.currentTimeMillis
      if (now - recordedAt < PROGRESS_EVERY_MS) return
      const live = yield* outsideTransaction(sql`
        UPDATE campaigns
        SET import_contacts = import_contacts + ${unrecorded}, import_bytes_read = ${target.bytesRead()}, import_heartbeat_at = now()
        WHERE id = ${target.campaignId} AND import_status = 'loading' AND import_owner = ${target.owner}
        RETURNING id`)
      if (live.length === 0) return yield* new ImportTakenOver()
      unrecorded = 0
      recordedAt = now
    })
  return sql.withTransaction(
    load(copyWriter(target), source, options, { pipelined: true, contended: target.contended, stored: recordProgress })
  )
}
