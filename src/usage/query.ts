import type { Statement } from "@effect/sql"
import { testModes } from "./channels.ts"
import type { CreatedWindow } from "./dates.ts"
import type { UsageFilter } from "./filters.ts"
import type { ProfileFilter, RollupSlice } from "./rollup.ts"

export type SortBy = "created_at" | "duration"
export type SortOrder = "asc" | "desc"

/** What a usage report selects, independent of paging. Every clause reads an indexed column. */
export interface UsageSelection {
  readonly organizationId: number
  readonly window: CreatedWindow
  readonly filters: ReadonlyArray<UsageFilter>
}

/** `LIKE` treats `%`, `_` and the escape character specially; a search is for the text itself. */
export const escapeLike = (text: string): string => text.replace(/[\\%_]/g, (char) => `\\${char}`)

/**
 * A number containing the text. For a `+` and digits the index is searched for the digits alone:
 * a `+` is not a word character to pg_trgm, so the pattern would also carry the trigrams of a
 * word starting with its first digits (" 4", " 44"), which every number of that country has, and
 * the index would hand back every run for a recheck (~0.6 s at a million runs). `strpos` then keeps
 * exactly the numbers containing the text with its `+`, as the plain pattern did.
 */
const numberContains = (
  sql: Statement.Constructor,
  column: "caller_number" | "called_number",
  contains: string
): Statement.Fragment => {
  const at = sql.literal(`r.${column}`)
  if (!/^\+\d+$/.test(contains)) return sql`${at} ILIKE ${`%${escapeLike(contains)}%`}`
  return sql`${at} ILIKE ${`%${contains.slice(1)}%`} AND strpos(${at}, ${contains}) > 0`
}

const filterClause = (sql: Statement.Constructor, filter: UsageFilter): Statement.Fragment => {
  switch (filter._tag) {
    case "RunId":
      return sql`r.id = ${filter.id}`
    case "WorkflowId":
      return sql`r.workflow_id = ${filter.id}`
    case "CampaignId":
      return sql`r.campaign_id = ${filter.id}`
    case "CallerNumber":
      return numberContains(sql, "caller_number", filter.contains)
    case "CalledNumber":
      return numberContains(sql, "called_number", filter.contains)
    case "Disposition":
      return sql`r.disposition IN ${sql.in(filter.codes)}`
    case "Duration":
      return sql.and([
        ...(filter.min === null ? [] : [sql`r.duration_seconds >= ${filter.min}`]),
        ...(filter.max === null ? [] : [sql`r.duration_seconds <= ${filter.max}`])
      ])
    case "Direction":
      return sql`r.direction = ${filter.direction}`
    case "Channel":
      return sql`r.channel = ${filter.channel}`
    case "TestRuns":
      return filter.only ? sql`r.mode IN ${sql.in(testModes)}` : sql`r.mode NOT IN ${sql.in(testModes)}`
    case "QualityScore":
      return sql`EXISTS (SELECT 1 FROM quality_reviews q WHERE q.run_id = r.id AND q.status = 'reviewed' AND ${
        sql.and([
          ...(filter.min === null ? [] : [sql`q.score >= ${filter.min}`]),
          ...(filter.max === null ? [] : [sql`q.score <= ${filter.max}`])
        ])
      })`
    case "QualityTag":
      return sql`EXISTS (SELECT 1 FROM quality_reviews q WHERE q.run_id = r.id AND q.status = 'reviewed'
        AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(q.tags) AS t (tag) WHERE t.tag IN ${sql.in(filter.tags)}))`
  }
}

const isNumberSearch = (filter: UsageFilter) => filter._tag === "CallerNumber" || filter._tag === "CalledNumber"

/** Whether a selection searches numbers (read through their trigram indexes). */
export const searchesNumbers = (selection: UsageSelection): boolean => selection.filters.some(isNumberSearch)

/**
 * The `WHERE` condition over `runs r` for a selection, always scoped to one organization.
 *
 * `searchFirst`, for a selection that searches numbers: every other condition but a run id is
 * written `(…) IS TRUE`, which selects the same runs but which no index can answer, so the runs are
 * found through the number's trigram index alone. The planner, which overestimates how many numbers
 * contain some digits, otherwise intersected it with the index of a direction or channel, or read an
 * agent's runs, a third of the organization's or 20,000 (0.1–0.2 s at a million) to narrow a few
 * hundred.
 */
export const selectionWhere = (
  sql: Statement.Constructor,
  selection: UsageSelection,
  options: { readonly searchFirst?: boolean } = {}
): Statement.Fragment => {
  const fence = options.searchFirst === true && searchesNumbers(selection)
  const broad = (condition: Statement.Fragment) => (fence ? sql`(${condition}) IS TRUE` : condition)
  return sql.and([
    broad(sql`r.organization_id = ${selection.organizationId}`),
    ...(selection.window.from ? [broad(sql`r.created_at >= ${selection.window.from}`)] : []),
    ...(selection.window.before ? [broad(sql`r.created_at < ${selection.window.before}`)] : []),
    ...selection.filters.map((filter) => {
      const clause = filterClause(sql, filter)
      return isNumberSearch(filter) || filter._tag === "RunId" ? clause : broad(clause)
    })
  ])
}

/** The sort key column for an ordering; `id` breaks ties in the same direction, so pages are stable. */
export const sortColumn = (sortBy: SortBy): "duration_seconds" | "created_at" =>
  sortBy === "duration" ? "duration_seconds" : "created_at"

export const orderBy = (
  sql: Statement.Constructor,
  sortBy: SortBy,
  order: SortOrder,
  alias = "r"
): Statement.Fragment => {
  const direction = order === "asc" ? "ASC" : "DESC"
  return sql.literal(`${alias}.${sortColumn(sortBy)} ${direction}, ${alias}.id ${direction}`)
}

/** Where the previous batch of an export ended: its last row's sort key and id. */
export interface SortCursor {
  /** `created_at` as PostgreSQL text (keeps microseconds a JS Date would drop), or the duration. */
  readonly key: string | number
  readonly id: number
}

/** Rows strictly after a cursor in the report's order (keyset paging for exports). */
export const afterCursor = (
  sql: Statement.Constructor,
  sortBy: SortBy,
  order: SortOrder,
  cursor: SortCursor
): Statement.Fragment => {
  const key = sortBy === "duration" ? sql`${cursor.key}::integer` : sql`${cursor.key}::timestamptz`
  const column = sql.literal(`r.${sortColumn(sortBy)}`)
  return order === "asc"
    ? sql`(${column}, r.id) > (${key}, ${cursor.id})`
    : sql`(${column}, r.id) < (${key}, ${cursor.id})`
}

/** The `run_daily_usage u` rows a rollup slice sums, for one organization and a span of UTC days. */
export const rollupWhere = (
  sql: Statement.Constructor,
  organizationId: number,
  slice: RollupSlice,
  days: { readonly firstDay: string | null; readonly endDay: string | null }
): Statement.Fragment =>
  sql.and([
    sql`u.organization_id = ${organizationId}`,
    ...(slice._tag === "Dimension"
      ? [sql`u.dimension = ${slice.dimension}`, sql`u.value IN ${sql.in(slice.values)}`]
      : [sql`u.dimension = 'profile'`, ...slice.filters.map((filter) => profileClause(sql, filter))]),
    ...(days.firstDay === null ? [] : [sql`u.day >= ${days.firstDay}::date`]),
    ...(days.endDay === null ? [] : [sql`u.day < ${days.endDay}::date`])
  ])

/** The `run_monthly_usage u` rows of whole months and whole duration buckets, for one organization. */
export const durationRollupWhere = (
  sql: Statement.Constructor,
  organizationId: number,
  profile: ReadonlyArray<ProfileFilter>,
  months: { readonly firstMonth: string | null; readonly endMonth: string | null },
  buckets: { readonly firstBucket: number | null; readonly endBucket: number | null }
): Statement.Fragment =>
  sql.and([
    sql`u.organization_id = ${organizationId}`,
    ...(months.firstMonth === null ? [] : [sql`u.month >= ${months.firstMonth}::date`]),
    ...(months.endMonth === null ? [] : [sql`u.month < ${months.endMonth}::date`]),
    ...(buckets.firstBucket === null ? [] : [sql`u.duration_bucket >= ${buckets.firstBucket}`]),
    ...(buckets.endBucket === null ? [] : [sql`u.duration_bucket < ${buckets.endBucket}`]),
    ...profile.map((filter) => profileClause(sql, filter))
  ])

const profileClause = (sql: Statement.Constructor, filter: ProfileFilter): Statement.Fragment => {
  switch (filter._tag) {
    case "Direction":
      return sql`u.direction = ${filter.direction}`
    case "Channel":
      return sql`u.channel = ${filter.channel}`
    case "Disposition":
      return sql`u.disposition IN ${sql.in(filter.codes)}`
  }
}
