import { SqlClient } from "@effect/sql"
import { Cause, Clock, Deferred, Effect, Exit, FiberMap, Layer, Option, Schedule } from "effect"
import * as crypto from "node:crypto"
import * as os from "node:os"
import type { Readable } from "node:stream"
import { AppConfig } from "../../services/AppConfig.ts"
import { type ContactImportJob, ContactImports, type ImportOutcome } from "../../services/ContactImports.ts"
import { DatabaseQueue } from "../../services/DatabaseQueue.ts"
import { Storage } from "../../services/Storage.ts"
import { logEntry } from "../../src/campaigns/campaignLog.ts"
import { loaderStopped } from "../../src/campaigns/contactImport.ts"
import { CsvContactsInvalid, type CsvContactsSummary } from "../../src/campaigns/csvContacts.ts"
import { ImportTakenOver, ingestContacts } from "./contactIngest.ts"

/** A loader proves it is alive this often (with PostgreSQL, where several processes may load)… */
const HEARTBEAT = "10 seconds"
/** …and an import whose loader has been silent this long is failed by any process. */
const LAPSE_SECONDS = 60
const SWEEP = "30 seconds"
/** Contacts deleted per statement when a failed import is cleared: short statements, as for loading. */
const CLEAR_ROWS = 2000

/** The file's bytes, counted as they are read, for the import's progress. */
const counted = (body: Readable) => {
  let bytes = 0
  const chunks = (async function*() {
    for await (const chunk of body as AsyncIterable<Uint8Array>) {
      bytes += chunk.length
      yield chunk
    }
  })()
  return { chunks, bytesRead: () => bytes }
}

const SKIPPED_ROWS_SHOWN = 5

/** The import's warning for contacts on the organization's do-not-call list (stored skipped, never dialled). */
const doNotCallWarning = (count: number, rows: ReadonlyArray<number>) =>
  `${count} ${count === 1 ? "row" : "rows"} skipped: number on the do-not-call list (${count === 1 ? "row" : "rows"} ${
    rows.join(", ")
  }${count > rows.length ? ` and ${count - rows.length} more` : ""})`

/** What the campaign says of a failure that is not the file's; the details go to the server log only. */
const serverSideFailure = "The import failed on the server (the reason is in its log); create the campaign again"

export const ContactImportsLive = Layer.scoped(
  ContactImports,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storage = yield* Storage
    const queue = yield* DatabaseQueue
    const onPostgres = Option.isSome((yield* AppConfig).databaseUrl)
    const owner = `${os.hostname()}:${process.pid}:${crypto.randomBytes(4).toString("hex")}`
    const jobs = yield* FiberMap.make<number>()

    /** Marks a loading import failed, and its campaign with it; false when it was no longer loading. */
    const markFailed = (campaignId: number, reasons: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const entry = logEntry(
          new Date(yield* Clock.currentTimeMillis),
          "error",
          "contacts_import_failed",
          reasons[0] ?? "The import failed",
          {
            reasons
          }
        )
        const marked = yield* sql`
          UPDATE campaigns
          SET import_status = 'failed', import_errors = ${JSON.stringify(reasons)}::jsonb,
              state = CASE WHEN state = 'created' THEN 'failed' ELSE state END,
              completed_at = COALESCE(completed_at, now()), logs = logs || ${JSON.stringify([entry])}::jsonb,
              import_heartbeat_at = now(), updated_at = now()
          WHERE id = ${campaignId} AND import_status = 'loading'
          RETURNING id`
        return marked.length > 0
      })

    /** Deletes what a failed import stored, a few thousand contacts per statement. */
    const clear = (campaignId: number) =>
      Effect.gen(function*() {
        while (true) {
          const deleted = yield* sql`
            DELETE FROM campaign_contacts
            WHERE id IN (SELECT id FROM campaign_contacts WHERE campaign_id = ${campaignId} ORDER BY id LIMIT ${CLEAR_ROWS})
            RETURNING 1`
          if (deleted.length < CLEAR_ROWS) break
        }
        yield* sql`UPDATE campaigns SET import_contacts = 0 WHERE id = ${campaignId} AND import_status = 'failed'`
      }).pipe(Effect.withSpan("ContactImports.clear", { attributes: { campaignId } }))

    /** Makes the stored contacts the campaign's, in one update; false when the import was taken over meanwhile. */
    const publish = (job: ContactImportJob, summary: CsvContactsSummary) =>
      Effect.gen(function*() {
        const [listed] = yield* sql<{ count: number; rows: ReadonlyArray<number> }>`
          SELECT count(*)::int AS count, (array_agg(row_number ORDER BY row_number))[1:${
          sql.literal(String(SKIPPED_ROWS_SHOWN))
        }] AS rows
          FROM campaign_contacts WHERE campaign_id = ${job.campaignId} AND state = 'skipped' AND skip_reason = 'dnc'`
        const warnings = listed && listed.count > 0
          ? [...summary.warnings, doNotCallWarning(listed.count, listed.rows)]
          : summary.warnings
        const entry = logEntry(
          new Date(yield* Clock.currentTimeMillis),
          "info",
          "contacts_imported",
          `${summary.accepted} contacts imported from ${job.sourceId}`,
          {
            accepted: summary.accepted,
            skipped_warnings: summary.warnings.length
          }
        )
        const zones = yield* sql<{ time_zones: string }>`
          SELECT DISTINCT time_zones FROM campaign_contacts WHERE campaign_id = ${job.campaignId} AND time_zones IS NOT NULL`
        const published = yield* sql`
          UPDATE campaigns
          SET import_status = 'ready', contact_zones = ${
          JSON.stringify(zones.map((row) => row.time_zones))
        }::jsonb, import_owner = NULL, import_heartbeat_at = NULL,
              import_bytes_read = COALESCE(import_bytes_total, import_bytes_read),
              total_rows = ${summary.accepted}, total_queued_count = ${summary.accepted}, import_contacts = ${summary.accepted},
              source_columns = ${JSON.stringify(summary.columns)}::jsonb, warnings = ${JSON.stringify(warnings)}::jsonb,
              logs = logs || ${JSON.stringify([entry])}::jsonb, updated_at = now()
          WHERE id = ${job.campaignId} AND import_status = 'loading' AND import_owner = ${owner}
          RETURNING id`
        return published.length > 0
      })

    /** Clears what an import stored after it was taken from this loader, and says why it was. */
    const stopped = (campaignId: number) =>
      Effect.zipRight(
        clear(campaignId),
        Effect.map(
          sql<{ import_errors: ReadonlyArray<string> }>`SELECT import_errors FROM campaigns WHERE id = ${campaignId}`,
          (rows): ImportOutcome => ({ _tag: "Stopped", reason: rows[0]?.import_errors[0] ?? loaderStopped })
        )
      )

    const heartbeat = (campaignId: number) =>
      sql`
        UPDATE campaigns SET import_heartbeat_at = now()
        WHERE id = ${campaignId} AND import_status = 'loading' AND import_owner = ${owner}`.pipe(
        Effect.ignore,
        Effect.repeat(Schedule.spaced(HEARTBEAT)),
        Effect.delay(HEARTBEAT)
      )

    const load = (job: ContactImportJob, headerAccepted: Deferred.Deferred<boolean>) =>
      Effect.scoped(Effect.gen(function*() {
        yield* Effect.forkScoped(heartbeat(job.campaignId))
        const body = counted(yield* storage.read(job.sourceId))
        return yield* ingestContacts(
          sql,
          { campaignId: job.campaignId, owner, bytesRead: body.bytesRead, contended: queue.contended },
          body.chunks,
          { ...job.options, onHeader: () => Deferred.unsafeDone(headerAccepted, Exit.succeed(true)) },
          onPostgres
        )
      }))

    /** One import from start to outcome; what it stored is cleared unless published. */
    const run = (job: ContactImportJob, headerAccepted: Deferred.Deferred<boolean>): Effect.Effect<ImportOutcome> =>
      load(job, headerAccepted).pipe(
        Effect.flatMap((summary) =>
          Effect.flatMap(publish(job, summary), (published): Effect.Effect<ImportOutcome, unknown> =>
            published
              ? Effect.succeed({ _tag: "Loaded", summary })
              : stopped(job.campaignId))
        ),
        Effect.catchAll((error): Effect.Effect<ImportOutcome, unknown> => {
          if (error instanceof CsvContactsInvalid) {
            return markFailed(job.campaignId, error.problems).pipe(
              Effect.zipRight(clear(job.campaignId)),
              Effect.as({ _tag: "Refused", problems: error.problems })
            )
          }
          if (error instanceof ImportTakenOver) return stopped(job.campaignId)
          return Effect.fail(error)
        }),
        Effect.catchAllCause((cause): Effect.Effect<ImportOutcome> => {
          if (Cause.isInterruptedOnly(cause)) return Effect.interrupt
          const stopped: ImportOutcome = { _tag: "Stopped", reason: serverSideFailure }
          return Effect.logError("Contact import failed", cause).pipe(
            Effect.zipRight(markFailed(job.campaignId, [serverSideFailure])),
            Effect.zipRight(clear(job.campaignId)),
            Effect.as(stopped),
            Effect.catchAllCause(() => Effect.succeed(stopped))
          )
        }),
        // This process is stopping: the import is failed now rather than when its heartbeat lapses.
        Effect.onInterrupt(() => markFailed(job.campaignId, [loaderStopped]).pipe(Effect.ignore)),
        Effect.withSpan("ContactImports.run", { attributes: { campaignId: job.campaignId } })
      )

    const start = Effect.fn("ContactImports.start")(function*(job: ContactImportJob) {
      const headerAccepted = yield* Deferred.make<boolean>()
      const outcome = yield* Deferred.make<ImportOutcome>()
      yield* FiberMap.run(
        jobs,
        job.campaignId,
        run(job, headerAccepted).pipe(
          Effect.tap((ended) => Deferred.succeed(outcome, ended)),
          Effect.ensuring(Deferred.succeed(headerAccepted, false))
        )
      )
      return { headerAccepted: Deferred.await(headerAccepted), outcome: Deferred.await(outcome) }
    })

    /** Fails imports whose loader went silent, and clears what failed imports left (a loader may die mid-clear). */
    const sweep = Effect.gen(function*() {
      // The embedded database belongs to one process (its data dir is locked): another loader is a dead one.
      const lapsed = yield* sql<{ id: number }>`
        SELECT id FROM campaigns
        WHERE import_status = 'loading'
          AND (import_heartbeat_at < now() - make_interval(secs => ${LAPSE_SECONDS})
               ${onPostgres ? sql`` : sql`OR import_owner IS DISTINCT FROM ${owner}`})`
      for (const { id } of lapsed) {
        if (yield* markFailed(id, [loaderStopped])) yield* clear(id)
      }
      const leftovers = yield* sql<{ id: number }>`
        SELECT id FROM campaigns
        WHERE import_status = 'failed' AND import_contacts > 0 AND import_heartbeat_at < now() - make_interval(secs => ${LAPSE_SECONDS})
        LIMIT 20`
      for (const { id } of leftovers) yield* clear(id)
    }).pipe(
      Effect.catchAllCause((cause) => Effect.logWarning("Contact import sweep failed", cause)),
      Effect.withSpan("ContactImports.sweep")
    )

    yield* Effect.forkScoped(Effect.repeat(sweep, Schedule.spaced(SWEEP)))

    return ContactImports.of({ owner, start, sweep })
  })
)
