import { SqlClient } from "@effect/sql"
import { Chunk, Effect, Layer, Option, Stream } from "effect"
import { AppConfig } from "../../services/AppConfig.ts"
import { DoNotCall, type DoNotCallInput, type DoNotCallQuery } from "../../services/DoNotCall.ts"
import { Storage } from "../../services/Storage.ts"
import { CsvContactsInvalid, readContacts } from "../../src/campaigns/csvContacts.ts"
import { doNotCallCopyColumns, doNotCallCopyRows, type DoNotCallRow } from "../../src/compliance/doNotCallCopyRows.ts"
import type { DoNotCallEntry, DoNotCallSource } from "../../src/compliance/doNotCallEntry.ts"
import { csvLine } from "../../src/csv/csvWriter.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { asRegion, toE164 } from "../../src/phone/mod.ts"
import { belongsTo } from "../../src/storage/uploadKeys.ts"
import { copyFromStdin } from "../db/copyFromStdin.ts"
import { uniqueViolation } from "../db/sqlDefects.ts"

/** Rows per statement of an import: per COPY on PostgreSQL, per INSERT on the embedded database. */
const IMPORT_ROWS = 20_000
const EXPORT_PAGE = 5000
const MAX_REASON = 500

const STAGING = "do_not_call_import_rows"

const numberProblem = (loc: ReadonlyArray<string>) =>
  ValidationFailed.single(
    loc,
    "Not a dialable phone number: write it in E.164 form (+14155550123) or give default_region"
  )

const regionOf = (value: string | undefined) =>
  value === undefined ? Effect.succeed(undefined) : Option.match(Option.fromNullable(asRegion(value)), {
    onNone: () => Effect.fail(ValidationFailed.single(["body", "default_region"], `Unknown region ${value}`)),
    onSome: Effect.succeed
  })

export const DoNotCallLive = Layer.effect(
  DoNotCall,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storage = yield* Storage
    const onPostgres = Option.isSome((yield* AppConfig).databaseUrl)

    const record = Effect.fn("DoNotCall.record")(
      function*(organizationId: OrganizationId, phoneNumber: string, source: DoNotCallSource, reason: string | null) {
        const added = yield* sql`
          INSERT INTO do_not_call_numbers (organization_id, phone_number, reason, source)
          VALUES (${organizationId}, ${phoneNumber}, ${reason}, ${source})
          ON CONFLICT (organization_id, phone_number) DO NOTHING
          RETURNING 1`
        return added.length > 0
      },
      Effect.orDie
    )

    const add = Effect.fn("DoNotCall.add")(function*(principal: Principal, input: DoNotCallInput) {
      const region = yield* regionOf(input.default_region)
      const number = toE164(input.phone_number, region)
      if (number === undefined) return yield* numberProblem(["body", "phone_number"])
      const reason = input.reason?.trim().slice(0, MAX_REASON) || null
      // A number listed already keeps its first source; a new reason replaces the old one.
      const [entry] = yield* sql<DoNotCallEntry>`
        INSERT INTO do_not_call_numbers (organization_id, phone_number, reason, source)
        VALUES (${principal.organizationId}, ${number}, ${reason}, 'api')
        ON CONFLICT (organization_id, phone_number)
          DO UPDATE SET reason = COALESCE(EXCLUDED.reason, do_not_call_numbers.reason)
        RETURNING phone_number, reason, source, created_at`.pipe(Effect.orDie)
      return entry!
    })

    const list = Effect.fn("DoNotCall.list")(function*(principal: Principal, query: DoNotCallQuery) {
      const digits = (query.search ?? "").replace(/[^0-9]/g, "")
      const matching = digits === "" ? sql`` : sql`AND phone_number LIKE ${`%${digits}%`}`
      const [count] = yield* sql<{ total: number }>`
        SELECT count(*)::int AS total FROM do_not_call_numbers
        WHERE organization_id = ${principal.organizationId} ${matching}`
      const items = yield* sql<DoNotCallEntry>`
        SELECT phone_number, reason, source, created_at FROM do_not_call_numbers
        WHERE organization_id = ${principal.organizationId} ${matching}
        ORDER BY phone_number
        LIMIT ${query.limit} OFFSET ${(query.page - 1) * query.limit}`
      return { items, total: count?.total ?? 0 }
    }, Effect.orDie)

    const remove = Effect.fn("DoNotCall.remove")(function*(principal: Principal, phoneNumber: string) {
      const number = toE164(phoneNumber, undefined)
      if (number === undefined) return yield* numberProblem(["path", "phone_number"])
      const deleted = yield* sql`
        DELETE FROM do_not_call_numbers WHERE organization_id = ${principal.organizationId} AND phone_number = ${number}
        RETURNING 1`.pipe(Effect.orDie)
      if (deleted.length === 0) return yield* new NotFound({ resource: "Do-not-call number", id: number })
    })

    /**
     * The staged batch onto the list, numbers listed already left out. Leaving them out by looking
     * them up and inserting the rest plainly takes half the time of `ON CONFLICT` (whose speculative
     * insertion costs more per row than the lookup), but a number another request lists while this
     * one runs makes that insert fail: then the batch is moved again with `ON CONFLICT`.
     */
    const moveStaged = (plainly: boolean) =>
      Effect.map(
        sql<{ stored: number }>`
          WITH stored AS (
            INSERT INTO do_not_call_numbers (organization_id, phone_number, reason, source)
            SELECT s.organization_id, s.phone_number, s.reason, s.source FROM ${sql.literal(STAGING)} s
            ${
          plainly
            ? sql`WHERE NOT EXISTS (SELECT 1 FROM do_not_call_numbers d
                                WHERE d.organization_id = s.organization_id AND d.phone_number = s.phone_number)`
            : sql`ON CONFLICT (organization_id, phone_number) DO NOTHING`
        }
            RETURNING 1
          )
          SELECT count(*)::int AS stored FROM stored`,
        ([moved]) => moved?.stored ?? 0
      )

    /** Stores a batch, skipping numbers listed already (and repeats within the batch: the first row wins); returns how many were new. */
    const store = (organizationId: number, rows: ReadonlyArray<DoNotCallRow>) =>
      onPostgres
        ? Effect.gen(function*() {
          const seen = new Set<string>()
          yield* copyFromStdin(
            `COPY ${STAGING} (${doNotCallCopyColumns.join(", ")}) FROM STDIN`,
            [doNotCallCopyRows(
              organizationId,
              rows.filter((row) => !seen.has(row.phone_number) && seen.add(row.phone_number))
            )],
            "Failed to copy do-not-call numbers"
          )
          const stored = yield* sql.withTransaction(moveStaged(true)).pipe(
            Effect.catchIf(
              (error) => uniqueViolation(error, "do_not_call_numbers_pkey"),
              () => moveStaged(false)
            )
          )
          yield* sql`TRUNCATE ${sql.literal(STAGING)}`
          return stored
        })
        : Effect.map(
          sql<{ stored: number }>`
            WITH stored AS (
              INSERT INTO do_not_call_numbers (organization_id, phone_number, reason, source)
              SELECT ${organizationId}, r.phone_number, r.reason, 'csv_import'
              FROM json_to_recordset(${JSON.stringify(rows)}::json) AS r(phone_number text, reason text)
              ON CONFLICT (organization_id, phone_number) DO NOTHING
              RETURNING 1
            )
            SELECT count(*)::int AS stored FROM stored`,
          ([moved]) => moved?.stored ?? 0
        )

    const importCsv = Effect.fn("DoNotCall.importCsv")(
      function*(principal: Principal, sourceId: string, defaultRegion: string | undefined) {
        if (!belongsTo(sourceId, principal.organizationId)) {
          return yield* ValidationFailed.single(
            ["body", "source_id"],
            "source_id is not an upload of this organization; use the s3_key from /api/v1/s3/presigned-upload-url"
          )
        }
        const region = yield* regionOf(defaultRegion)
        const load = Effect.scoped(Effect.gen(function*() {
          const body = yield* storage.read(sourceId).pipe(
            Effect.catchTag(
              "NotFound",
              () =>
                Effect.fail(
                  ValidationFailed.single(["body", "source_id"], "No file has been uploaded to source_id yet")
                )
            ),
            Effect.catchTag("UpstreamFailed", (error) => Effect.fail(new Conflict({ message: error.message })))
          )
          if (onPostgres) {
            yield* sql.unsafe(`
              CREATE TEMPORARY TABLE ${STAGING} (organization_id bigint, phone_number text, reason text, source text)
              ON COMMIT DROP`)
          }
          const batches = readContacts(body as AsyncIterable<Uint8Array>, {
            defaultRegion: region,
            requiredColumns: [],
            batchSize: IMPORT_ROWS
          })
          // The next batch is read (parsed, numbers normalised) while the database stores this one; a
          // failure to read it is taken up when it is awaited, never left unhandled meanwhile.
          const readAhead = () => {
            const reading = batches.next()
            reading.catch(() => undefined)
            return reading
          }
          let reading = readAhead()
          let imported = 0
          let read = 0
          while (true) {
            const current = reading
            const next = yield* Effect.tryPromise({ try: () => current, catch: (error) => error }).pipe(
              Effect.catchAll((error) =>
                error instanceof CsvContactsInvalid
                  ? Effect.fail(
                    new ValidationFailed({
                      message: error.problems[0] ?? "The CSV is not valid",
                      problems: error.problems.map((msg) => ({ loc: ["body", "source_id"], msg, type: "csv_invalid" }))
                    })
                  )
                  : Effect.die(error)
              )
            )
            if (next.done) {
              const skipped = [next.value.empty.count, next.value.invalid.count]
              const warnings = [
                ...(skipped[0]! > 0 ? [`${skipped[0]} rows skipped: empty phone number`] : []),
                ...(skipped[1]! > 0 ? [`${skipped[1]} rows skipped: invalid phone number`] : [])
              ]
              return { imported, already_listed: read - imported, warnings }
            }
            reading = readAhead()
            read += next.value.length
            imported += yield* store(
              principal.organizationId,
              next.value.map((contact) => ({
                phone_number: contact.phone_number,
                reason: Object.hasOwn(contact.context, "reason")
                  ? contact.context["reason"]!.trim().slice(0, MAX_REASON) || null
                  : null
              }))
            )
          }
        }))
        // On PostgreSQL the file is one transaction: a file refused halfway leaves the list as it was.
        return yield* (onPostgres ? sql.withTransaction(load) : load).pipe(
          Effect.catchTag("SqlError", Effect.die)
        )
      }
    )

    const exportCsv = (principal: Principal) => {
      const page = (after: string) =>
        sql<DoNotCallEntry>`
          SELECT phone_number, reason, source, created_at FROM do_not_call_numbers
          WHERE organization_id = ${principal.organizationId} AND phone_number > ${after}
          ORDER BY phone_number LIMIT ${EXPORT_PAGE}`.pipe(Effect.orDie)
      const lines = Stream.paginateChunkEffect("", (after: string) =>
        Effect.map(page(after), (rows) => {
          const text = rows.map((row) => csvLine([row.phone_number, row.reason, row.source, row.created_at])).join("")
          const last = rows[rows.length - 1]
          return [Chunk.of(text), rows.length === EXPORT_PAGE && last ? Option.some(last.phone_number) : Option.none()]
        }))
      return Stream.concat(Stream.make(csvLine(["phone_number", "reason", "source", "created_at"])), lines)
    }

    return DoNotCall.of({ add, list, remove, importCsv, exportCsv, record })
  })
)
