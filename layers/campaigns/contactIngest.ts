import { SqlClient } from "@effect/sql"
import { SqlError } from "@effect/sql/SqlError"
import { unsafeFragment } from "@effect/sql/Statement"
import { Clock, Context, Data, Effect, Fiber } from "effect"
import { contactCopyColumns, contactCopyRows } from "../../src/campaigns/contactCopyRows.ts"
import { nextStatementRows } from "../../src/campaigns/contactImport.ts"
import {
  type Contact,
  contactsSummary,
  CsvContactsInvalid,
  type CsvContactsOptions,
  type CsvContactsSummary,
  readContacts
} from "../../src/campaigns/csvContacts.ts"
import { RowList } from "../../src/campaigns/rowList.ts"
import { contactZoneKey } from "../../src/compliance/contactZones.ts"
import { copyFromStdin } from "../db/copyFromStdin.ts"

/**
 * Memory an import holds, whatever the file's length (README "Campaigns"): the parser's buffer
 * (rows are at most MAX_LINE_CHARS), a read batch, and the rows of the statement being built and
 * of the one running: at most 2 × 5,000 rows (a few MB for ordinary contacts). Numbers repeated
 * in the file are found by the database, through the unique index on (campaign_id, phone_number),
 * not by a set of every number in this process, which grew ~31 MB per million rows (the embedded
 * import's loader keeps one statement's numbers, at most 5,000, to drop repeats within it).
 */
/**
 * Contacts are read in small batches, each turned into statement data at once and let go of. Small
 * enough that the running statement's round trips (whose answers this thread handles between two
 * batches) wait for a fraction of a millisecond of parsing, not for 250 rows of it: on the embedded
 * database that wait left its thread idle for a tenth of the import.
 */
const READ_BATCH_ROWS = 50
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
  /**
   * With one statement at a time: the fewest rows worth a statement of their own, sent before the
   * full count once the last statement has answered, rather than leave the database idle.
   */
  readonly fewestRows?: number
  /** Stores the rows added so far in one statement, but those repeating a stored number. */
  readonly take: () => Effect.Effect<Stored, SqlError | ImportTakenOver>
}

/** What a statement stored, and the rows it skipped because their number was stored already. */
interface Stored {
  readonly rows: number
  readonly skipped: number
  /** The first few skipped rows, in order (for the warning's "rows 5, 7 and 12 more"). */
  readonly firstSkipped: ReadonlyArray<number>
}

/**
 * A contact's `state, skip_reason`: one on the organization's do-not-call list is stored skipped
 * (so the report shows it and the import warns of it) and is never claimed. `anyListed`, when
 * given, says whether the organization lists any number at all, so that an organization without
 * a list spares each row its two probes.
 */
const doNotCallState = (organization: string, number: string, anyListed?: string) => {
  const probe =
    `EXISTS (SELECT 1 FROM do_not_call_numbers d WHERE d.organization_id = ${organization} AND d.phone_number = ${number})`
  const listed = anyListed === undefined ? probe : `${anyListed} AND ${probe}`
  return unsafeFragment(
    `CASE WHEN ${listed} THEN 'skipped' ELSE 'pending' END, CASE WHEN ${listed} THEN 'dnc' END`
  )
}

/** Skipped rows a statement names: as many as the warning shows. */
const SKIPPED_SHOWN = 5

/** Runs on a connection of its own, even where the caller is inside a transaction. */
const outsideTransaction = <A, E>(effect: Effect.Effect<A, E>): Effect.Effect<A, E> =>
  Effect.mapInputContext(
    effect,
    (context: Context.Context<never>) => Context.omit(SqlClient.TransactionConnection)(context)
  )

/**
 * One statement, in a transaction of its own, per batch: the rows travel as a single JSON parameter
 * (an array of positional arrays, unpacked by the database as `jsonb`: about a sixth less of its
 * work per row than named fields through `json_to_recordset`), and only while the import is still loading
 * under this loader, which the statement locks (FOR UPDATE) before it inserts; the same statement
 * counts them into the campaign's progress.
 *
 * Numbers are kept unique without `ON CONFLICT`, whose speculative insertion (a token per row, a
 * second WAL record to confirm it) cost the embedded database a tenth of its work per contact: a
 * number repeated within the statement is dropped here (a set of at most one statement's numbers),
 * one stored by an earlier statement is left out by the statement's probe of the unique index.
 * Nothing else writes this campaign's contacts while its import loads, and the statement holds the
 * campaign row locked; were a writer to slip in anyway, the unique index would fail the statement,
 * and so the import, rather than store a number twice.
 *
 * The statement runs with `session_replication_role = replica`, which skips the per-row check of
 * `campaign_contacts`' foreign key, a fifth of the embedded database's work per contact: every row
 * takes its `campaign_id` from the campaign row the same statement holds locked, so the reference
 * exists by construction and cannot go away before the commit. The role also skips ordinary
 * triggers: `campaign_contacts` has none of its own, and those of `campaigns` fire only on an update
 * of its `state`, which this one leaves alone (tests guard both).
 *
 * The role is set by the statement itself, as its locked campaign row is read (`set_config`, local
 * to the transaction): a row is inserted only after that row is read, so each insert sees the role,
 * and the statement's own transaction, which ends with it, takes the role back. The embedded
 * database's one backend serves every connection, but nothing else runs inside a statement. An
 * explicit transaction (begin, set, insert, commit) did the same in four round trips, each of
 * which left the database waiting for this thread while it parsed the file. The embedded
 * database's user is its superuser, whom the setting requires.
 */
const insertWriter = (sql: SqlClient.SqlClient, target: ImportTarget): ContactWriter => {
  let parts: Array<string> = []
  let rows = 0
  let numbers = new Set<string>()
  let repeated: Array<number> = []
  let repeats = 0
  let statementRows = EMBEDDED_ROWS.min
  const insert = (json: string, count: number) =>
    sql<{ live: boolean; stored: number; skipped: ReadonlyArray<number> | null }>`
      WITH live AS (
        SELECT id, organization_id, set_config('session_replication_role', 'replica', true) AS role,
               EXISTS (SELECT 1 FROM do_not_call_numbers d WHERE d.organization_id = campaigns.organization_id) AS any_listed
        FROM campaigns
        WHERE id = ${target.campaignId} AND import_status = 'loading' AND import_owner = ${target.owner}
        FOR UPDATE
      ), input AS MATERIALIZED (
        SELECT (e->>0)::integer AS row_number, e->>1 AS phone_number, e->2 AS context,
               nullif(e->3, 'null') AS greeting_override, e->>4 AS time_zones
        FROM jsonb_array_elements(${json}::jsonb) e
      ), stored AS (
        INSERT INTO campaign_contacts (campaign_id, row_number, phone_number, context, greeting_override, time_zones,
                                       state, skip_reason)
        SELECT live.id, i.row_number, i.phone_number, i.context, i.greeting_override, i.time_zones, ${
      doNotCallState("live.organization_id", "i.phone_number", "live.any_listed")
    }
        FROM live, input i
        WHERE NOT EXISTS (
          SELECT 1 FROM campaign_contacts c WHERE c.campaign_id = live.id AND c.phone_number = i.phone_number
        )
        ORDER BY i.row_number
        RETURNING row_number
      ), counted AS (
        SELECT count(*)::int AS stored FROM stored
      ), progressed AS (
        UPDATE campaigns
        SET import_contacts = import_contacts + counted.stored,
            import_bytes_read = ${target.bytesRead()}, import_heartbeat_at = now()
        FROM live, counted
        WHERE campaigns.id = live.id
      )
      SELECT EXISTS (SELECT 1 FROM live) AS live, counted.stored, CASE WHEN counted.stored < ${count} THEN ARRAY(
        SELECT i.row_number FROM input i WHERE NOT EXISTS (SELECT 1 FROM stored s WHERE s.row_number = i.row_number)
        ORDER BY 1 LIMIT ${SKIPPED_SHOWN}
      ) END AS skipped
      FROM counted`
  return {
    add: (batch) => {
      const fresh: Array<unknown> = []
      for (const contact of batch) {
        if (numbers.has(contact.phone_number)) {
          if (repeated.length < SKIPPED_SHOWN) repeated.push(contact.row)
          repeats++
          continue
        }
        numbers.add(contact.phone_number)
        fresh.push([
          contact.row,
          contact.phone_number,
          contact.context,
          contact.greeting_override,
          contactZoneKey(contact.phone_number, contact.context)
        ])
      }
      rows += batch.length
      if (fresh.length > 0) parts.push(JSON.stringify(fresh).slice(1, -1))
    },
    pending: () => rows,
    statementRows: () => statementRows,
    fewestRows: EMBEDDED_ROWS.min,
    take: () => {
      const json = `[${parts.join(",")}]`
      const count = rows - repeats
      const repeatedHere = { rows: repeated, count: repeats }
      parts = []
      rows = 0
      numbers = new Set()
      repeated = []
      repeats = 0
      // Outside any caller's transaction: the statement's own must end with it, and take the role back.
      return outsideTransaction(Effect.gen(function*() {
        const started = performance.now()
        // Statements run in file order and the loader keeps a statement's first row of a number, so
        // of rows sharing a number the first is the one kept.
        const [answer] = yield* insert(json, count)
        if (answer === undefined || !answer.live) return yield* new ImportTakenOver()
        statementRows = nextStatementRows(
          count + repeatedHere.count,
          performance.now() - started,
          EMBEDDED_STATEMENT_MS,
          EMBEDDED_ROWS
        )
        return {
          rows: answer.stored,
          skipped: count - answer.stored + repeatedHere.count,
          firstSkipped: [...repeatedHere.rows, ...(answer.skipped ?? [])].sort((a, b) => a - b).slice(0, SKIPPED_SHOWN)
        }
      }))
    }
  }
}

/**
 * The transaction's staging table: COPY cannot skip a row that breaks a unique index, so rows are
 * copied here, then moved into `campaign_contacts` by an INSERT that skips numbers stored already.
 * Temporary (no WAL, this session only) and dropped with the transaction.
 */
const STAGING = "contact_import_rows"
const createStaging = `
  CREATE TEMPORARY TABLE ${STAGING} (
    campaign_id bigint, row_number integer, phone_number text, context jsonb, greeting_override jsonb, time_zones text
  ) ON COMMIT DROP`
const copyStatement = `COPY ${STAGING} (${contactCopyColumns.join(", ")}) FROM STDIN`

/**
 * PostgreSQL: rows go in by `COPY … FROM STDIN`, several times faster than INSERT, on the
 * transaction's node-postgres client (an @effect/sql-pg detail, checked here rather than trusted),
 * through the staging table. A statement's three steps hold `oneAtATime`, so the next COPY (sent
 * while the last rows are still being moved) cannot land in the staging table before it is emptied.
 */
const copyWriter = (sql: SqlClient.SqlClient, target: ImportTarget, oneAtATime: Effect.Semaphore): ContactWriter => {
  let chunks: Array<Buffer> = []
  let rows = 0
  const copy = (data: ReadonlyArray<Buffer>) => copyFromStdin(copyStatement, data, "Failed to copy contacts")
  const move = (count: number) =>
    Effect.gen(function*() {
      const [answer] = yield* sql<{ stored: number; skipped: ReadonlyArray<number> | null }>`
        WITH stored AS (
          INSERT INTO campaign_contacts (${sql.literal(contactCopyColumns.join(", "))}, state, skip_reason)
          SELECT ${sql.literal(contactCopyColumns.map((column) => `i.${column}`).join(", "))},
                 ${doNotCallState("k.organization_id", "i.phone_number")}
          FROM ${sql.literal(STAGING)} i JOIN campaigns k ON k.id = i.campaign_id ORDER BY i.row_number
          ON CONFLICT (campaign_id, phone_number) DO NOTHING
          RETURNING row_number
        ), counted AS (
          SELECT count(*)::int AS stored FROM stored
        )
        SELECT counted.stored, CASE WHEN counted.stored < ${count} THEN ARRAY(
          SELECT i.row_number FROM ${sql.literal(STAGING)} i
          WHERE NOT EXISTS (SELECT 1 FROM stored s WHERE s.row_number = i.row_number)
          ORDER BY 1 LIMIT ${SKIPPED_SHOWN}
        ) END AS skipped
        FROM counted`
      yield* sql`TRUNCATE ${sql.literal(STAGING)}`
      const stored = answer?.stored ?? 0
      return { rows: stored, skipped: count - stored, firstSkipped: answer?.skipped ?? [] }
    })
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
      return oneAtATime.withPermits(1)(Effect.zipRight(copy(data), move(count))).pipe(
        Effect.withSpan("ContactIngest.copy", { attributes: { rows: count } })
      )
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
    const duplicate = new RowList()
    let inFlight: Fiber.RuntimeFiber<Stored, SqlError | ImportTakenOver> | undefined
    const settle = Effect.suspend(() =>
      inFlight
        ? Effect.flatMap(Fiber.join(inFlight), (stored) => {
          duplicate.addSome(stored.firstSkipped, stored.skipped)
          return turn.stored(stored.rows)
        })
        : Effect.void
    )
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
        const answered = inFlight === undefined || inFlight.unsafePoll() !== null
        const enough = writer.pending() >= writer.statementRows() ||
          (writer.fewestRows !== undefined && answered && writer.pending() >= writer.fewestRows)
        if (!enough) continue
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
        return contactsSummary(next.value, duplicate)
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
  return sql.withTransaction(Effect.gen(function*() {
    yield* sql.unsafe(createStaging)
    const oneAtATime = yield* Effect.makeSemaphore(1)
    return yield* load(copyWriter(sql, target, oneAtATime), source, options, {
      pipelined: true,
      contended: target.contended,
      stored: recordProgress
    })
  }))
}
