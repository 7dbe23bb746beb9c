import { SqlClient } from "@effect/sql"
import { Chunk, Clock, Effect, Either, Layer, Option, Stream } from "effect"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { type UsageCriteria, type UsageOrdering, UsageReports } from "../../services/UsageReports.ts"
import { csvLine } from "../../src/csv/csvWriter.ts"
import { ValidationFailed } from "../../src/domain/errors.ts"
import { hasScope, type Principal } from "../../src/domain/principal.ts"
import {
  ARTIFACT_LINK_PURPOSE,
  ARTIFACT_LINK_TTL_SECONDS,
  type ArtifactKind,
  artifactLinkMessage,
  artifactLinkUrl,
  artifactPath
} from "../../src/usage/artifactLinks.ts"
import { type DayTotals, denseDailySeries, knownTimeZone } from "../../src/usage/dailySeries.ts"
import { checkedWindow } from "../../src/usage/dates.ts"
import { pageOffset, totalPages } from "../../src/usage/pagination.ts"
import { afterCursor, orderBy, selectionWhere, type SortCursor, type UsageSelection } from "../../src/usage/query.ts"
import { reportTotals, runsPage } from "./reportQueries.ts"
import { csvCells, csvHeader, runColumns, toRunView, type UsageRunRow } from "./reportRows.ts"

/** Rows per database round trip while exporting: small enough to stream, large enough to be quick. */
const EXPORT_BATCH = 1000

const selectionOf = (principal: Principal, criteria: UsageCriteria) =>
  Either.match(checkedWindow(criteria.start, criteria.end), {
    onLeft: (message) => Effect.fail(ValidationFailed.single(["query", "end_date"], message)),
    onRight: (window): Effect.Effect<UsageSelection> =>
      Effect.succeed({ organizationId: principal.organizationId, window, filters: criteria.filters })
  })

export const UsageReportsLive = Layer.effect(
  UsageReports,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* SecretBox
    // The address the server really answers on (PUBLIC_URL, or the port the OS picked): links are followed by browsers.
    const publicUrl = yield* PublicUrl

    const artifactLinks = Effect.map(Clock.currentTimeMillis, (now) => {
      const expires = Math.floor(now / 1000) + ARTIFACT_LINK_TTL_SECONDS
      return (runId: number, kind: ArtifactKind) => {
        const path = artifactPath(runId, kind)
        return artifactLinkUrl(
          publicUrl,
          path,
          expires,
          secrets.sign(ARTIFACT_LINK_PURPOSE, artifactLinkMessage(path, expires))
        )
      }
    })

    const totalsOf = (selection: UsageSelection) => reportTotals(sql, selection).pipe(Effect.map((rows) => rows[0]!))

    const pageOf = (selection: UsageSelection, ordering: UsageOrdering, limit: number, offset: number) =>
      runsPage(sql, selection, ordering, limit, offset)

    const runs = Effect.fn("UsageReports.runs")(function*(
      principal: Principal,
      criteria: UsageCriteria,
      ordering: UsageOrdering,
      paging: { readonly page: number; readonly limit: number }
    ) {
      const selection = yield* selectionOf(principal, criteria)
      const [rows, totals, link] = yield* Effect.all([
        pageOf(selection, ordering, paging.limit, pageOffset(paging.page, paging.limit)),
        totalsOf(selection),
        artifactLinks
      ], { concurrency: "unbounded" }).pipe(Effect.catchTag("SqlError", Effect.die))
      return {
        // The links open the recording and transcript: conversation content, not usage.
        runs: rows.map((row) => toRunView(row, hasScope(principal, "conversations:read") ? link : () => null)),
        total_service_tokens: totals.total_service_tokens,
        total_duration_seconds: totals.total_duration_seconds,
        total_count: totals.total_count,
        page: paging.page,
        limit: paging.limit,
        total_pages: totalPages(totals.total_count, paging.limit)
      }
    })

    const dailyBreakdown = Effect.fn("UsageReports.dailyBreakdown")(function*(
      principal: Principal,
      criteria: UsageCriteria
    ) {
      const selection = yield* selectionOf(principal, criteria)
      const [organization] = yield* sql<{ timezone: string }>`
        SELECT timezone FROM organizations WHERE id = ${principal.organizationId}`.pipe(Effect.orDie)
      const timezone = knownTimeZone(organization?.timezone ?? "UTC")
      const totals = yield* sql<DayTotals>`
        SELECT to_char(r.created_at AT TIME ZONE ${timezone}, 'YYYY-MM-DD') AS date,
               count(*) AS runs,
               coalesce(sum(r.duration_seconds), 0)::bigint AS duration_seconds,
               coalesce(sum(r.service_tokens), 0)::bigint AS service_tokens
        FROM runs r
        WHERE ${selectionWhere(sql, selection)}
        GROUP BY 1`.pipe(Effect.orDie)
      const days = yield* Either.match(denseDailySeries(totals, selection.window, timezone), {
        onLeft: (message) =>
          Effect.fail(ValidationFailed.single(["query", "start_date"], `The daily breakdown ${message}`)),
        onRight: Effect.succeed
      })
      const sum = (pick: (day: DayTotals) => number) => totals.reduce((total, day) => total + pick(day), 0)
      const totalSeconds = sum((day) => day.duration_seconds)
      return {
        timezone,
        days,
        total_runs: sum((day) => day.runs),
        total_duration_seconds: totalSeconds,
        total_minutes: Math.round((totalSeconds / 60) * 100) / 100,
        total_service_tokens: sum((day) => day.service_tokens)
      }
    })

    const exportBatch = (selection: UsageSelection, ordering: UsageOrdering, cursor: SortCursor | undefined) =>
      sql<UsageRunRow>`
        SELECT ${runColumns(sql, false)}
        FROM runs r
        LEFT JOIN workflows w ON w.id = r.workflow_id
        WHERE ${selectionWhere(sql, selection)}
          ${cursor ? sql`AND ${afterCursor(sql, ordering.sortBy, ordering.sortOrder, cursor)}` : sql``}
        ORDER BY ${orderBy(sql, ordering.sortBy, ordering.sortOrder)}
        LIMIT ${EXPORT_BATCH}`.pipe(Effect.orDie)

    const runsCsv = Effect.fn("UsageReports.runsCsv")(function*(
      principal: Principal,
      criteria: UsageCriteria,
      ordering: UsageOrdering
    ) {
      const selection = yield* selectionOf(principal, criteria)
      // Keyset batches rather than one cursor: no transaction stays open while a slow client reads.
      const batches = Stream.paginateChunkEffect(
        undefined as SortCursor | undefined,
        (cursor) =>
          exportBatch(selection, ordering, cursor).pipe(
            Effect.map((rows) => {
              const last = rows.at(-1)
              const next: Option.Option<SortCursor> = last && rows.length === EXPORT_BATCH
                ? Option.some({
                  key: ordering.sortBy === "duration" ? last.duration_seconds : last.created_key,
                  id: last.id
                })
                : Option.none()
              return [Chunk.of(rows.map((row) => csvLine(csvCells(row))).join("")), next] as const
            })
          )
      )
      return Stream.concat(Stream.make(csvLine(csvHeader)), batches)
    })

    return UsageReports.of({ runs, dailyBreakdown, runsCsv })
  })
)
