import type { Statement } from "@effect/sql"
import {
  orderBy,
  rollupWhere,
  selectionWhere,
  type SortBy,
  type SortOrder,
  type UsageSelection
} from "../../src/usage/query.ts"
import { type DaySplit, type RollupSlice, rollupSlice, splitByUtcDay } from "../../src/usage/rollup.ts"
import { runColumns, type UsageRunDetailRow } from "./reportRows.ts"

interface Totals {
  readonly total_count: number
  readonly total_duration_seconds: number
  readonly total_service_tokens: number
}

/** Count, seconds and tokens of every selected run (sums cast back to bigint, which arrives as a number). */
export const exactTotals = (sql: Statement.Constructor, selection: UsageSelection) =>
  sql<Totals>`
    SELECT count(*) AS total_count,
           coalesce(sum(r.duration_seconds), 0)::bigint AS total_duration_seconds,
           coalesce(sum(r.service_tokens), 0)::bigint AS total_service_tokens
    FROM runs r
    WHERE ${selectionWhere(sql, selection)}`

/**
 * Whole UTC days from `run_daily_usage`, partial days at the window's ends from `runs`, in one
 * statement so both parts read the same snapshot.
 */
const rolledUpTotals = (sql: Statement.Constructor, selection: UsageSelection, slice: RollupSlice, split: DaySplit) =>
  sql<Totals>`
    SELECT coalesce(sum(part.runs), 0)::bigint AS total_count,
           coalesce(sum(part.duration_seconds), 0)::bigint AS total_duration_seconds,
           coalesce(sum(part.service_tokens), 0)::bigint AS total_service_tokens
    FROM (
      SELECT u.runs, u.duration_seconds, u.service_tokens
      FROM run_daily_usage u
      WHERE ${rollupWhere(sql, selection.organizationId, slice, split)}
      ${
    sql.join(" ", false)(split.edges.map((edge) =>
      sql`UNION ALL
      SELECT count(*), coalesce(sum(r.duration_seconds), 0), coalesce(sum(r.service_tokens), 0)
      FROM runs r
      WHERE ${selectionWhere(sql, { ...selection, window: edge })}`
    ))
  }
    ) part`

/** The report's totals, from the daily rollup whenever the filters allow it. */
export const reportTotals = (sql: Statement.Constructor, selection: UsageSelection) => {
  const slice = rollupSlice(selection.filters)
  const split = slice && splitByUtcDay(selection.window)
  return slice && split ? rolledUpTotals(sql, selection, slice, split) : exactTotals(sql, selection)
}

/** One page: chosen on `runs` alone (index order, then LIMIT), and only its rows are joined. */
export const runsPage = (
  sql: Statement.Constructor,
  selection: UsageSelection,
  ordering: { readonly sortBy: SortBy; readonly sortOrder: SortOrder },
  limit: number,
  offset: number
) =>
  sql<UsageRunDetailRow>`
    SELECT ${runColumns(sql, true)}
    FROM (
      SELECT r.id FROM runs r
      WHERE ${selectionWhere(sql, selection)}
      ORDER BY ${orderBy(sql, ordering.sortBy, ordering.sortOrder)}
      LIMIT ${limit} OFFSET ${offset}
    ) page
    JOIN runs r ON r.id = page.id
    LEFT JOIN workflows w ON w.id = r.workflow_id
    ORDER BY ${orderBy(sql, ordering.sortBy, ordering.sortOrder)}`
