import type { Statement } from "@effect/sql"
import { type DurationRollup, durationRollup, splitByBucket, splitByUtcMonth } from "../../src/usage/durationRollup.ts"
import {
  durationRollupWhere,
  orderBy,
  rollupWhere,
  searchesNumbers,
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
    WHERE ${selectionWhere(sql, selection, { searchFirst: true })}`

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

/**
 * Whole months × whole duration buckets from `run_monthly_usage`; from `runs`, the partial buckets
 * of the whole months and every run of the partial months, in one statement (one snapshot).
 */
const monthlyTotals = (
  sql: Statement.Constructor,
  selection: UsageSelection,
  rollup: DurationRollup,
  months: NonNullable<ReturnType<typeof splitByUtcMonth>>,
  buckets: NonNullable<ReturnType<typeof splitByBucket>>
) => {
  const counted = (part: UsageSelection) =>
    sql`UNION ALL
      SELECT count(*), coalesce(sum(r.duration_seconds), 0), coalesce(sum(r.service_tokens), 0)
      FROM runs r
      WHERE ${selectionWhere(sql, part)}`
  const parts = [
    ...buckets.edges.map((edge) => ({
      organizationId: selection.organizationId,
      window: months.whole,
      filters: [...rollup.profile, { _tag: "Duration" as const, min: edge.min, max: edge.max }]
    })),
    ...months.edges.map((edge) => ({ ...selection, window: edge }))
  ]
  return sql<Totals>`
    SELECT coalesce(sum(part.runs), 0)::bigint AS total_count,
           coalesce(sum(part.duration_seconds), 0)::bigint AS total_duration_seconds,
           coalesce(sum(part.service_tokens), 0)::bigint AS total_service_tokens
    FROM (
      SELECT u.runs, u.duration_seconds, u.service_tokens
      FROM run_monthly_usage u
      WHERE ${durationRollupWhere(sql, selection.organizationId, rollup.profile, months, buckets)}
      ${sql.join(" ", false)(parts.map(counted))}
    ) part`
}

/**
 * The report's totals, from the daily rollup whenever the filters allow it, from the monthly one by
 * duration when they filter on duration, and otherwise counted from `runs` (the other filters, an
 * agent, a campaign, a number or a run, select few runs, through an index).
 */
export const reportTotals = (sql: Statement.Constructor, selection: UsageSelection) => {
  const slice = rollupSlice(selection.filters)
  const split = slice && splitByUtcDay(selection.window)
  if (slice && split) return rolledUpTotals(sql, selection, slice, split)
  const rollup = durationRollup(selection.filters)
  const months = rollup && splitByUtcMonth(selection.window)
  const buckets = rollup && splitByBucket(rollup.duration)
  return rollup && months && buckets
    ? monthlyTotals(sql, selection, rollup, months, buckets)
    : exactTotals(sql, selection)
}

/**
 * A number search's matches are fetched through its trigram index and sorted when there are at most
 * this many; walking the report's order index instead, the planner (which cannot tell how many
 * numbers contain some digits) read every run of the organization to fill a page of a rare search.
 */
const SEARCH_SORT_LIMIT = 5000

const pageIds = (
  sql: Statement.Constructor,
  selection: UsageSelection,
  ordering: { readonly sortBy: SortBy; readonly sortOrder: SortOrder },
  limit: number,
  offset: number
) => {
  const inOrder = sql`
    SELECT r.id FROM runs r
    WHERE ${selectionWhere(sql, selection)}
    ORDER BY ${orderBy(sql, ordering.sortBy, ordering.sortOrder)}
    LIMIT ${limit} OFFSET ${offset}`
  if (!searchesNumbers(selection)) return inOrder
  // Both branches are gated on the count: PostgreSQL runs only the one whose condition holds.
  return sql`
    WITH matched AS MATERIALIZED (
      SELECT r.id, r.created_at, r.duration_seconds FROM runs r
      WHERE ${selectionWhere(sql, selection, { searchFirst: true })}
      LIMIT ${SEARCH_SORT_LIMIT + 1}
    )
    (SELECT r.id FROM matched r WHERE (SELECT count(*) FROM matched) <= ${SEARCH_SORT_LIMIT}
     ORDER BY ${orderBy(sql, ordering.sortBy, ordering.sortOrder)}
     LIMIT ${limit} OFFSET ${offset})
    UNION ALL
    (SELECT page.id FROM (${inOrder}) page WHERE (SELECT count(*) FROM matched) > ${SEARCH_SORT_LIMIT})`
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
    FROM (${pageIds(sql, selection, ordering, limit, offset)}) page
    JOIN runs r ON r.id = page.id
    LEFT JOIN workflows w ON w.id = r.workflow_id
    ORDER BY ${orderBy(sql, ordering.sortBy, ordering.sortOrder)}`
