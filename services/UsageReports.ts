import { Context, type Effect, type Stream } from "effect"
import type { ValidationFailed } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { QualityReviewView } from "../src/quality/reviewView.ts"
import type { DayUsage } from "../src/usage/dailySeries.ts"
import type { DateBound } from "../src/usage/dates.ts"
import type { UsageFilter } from "../src/usage/filters.ts"
import type { SortBy, SortOrder } from "../src/usage/query.ts"

/** Which runs a report covers: `created_at` between two inclusive bounds, and every filter. */
export interface UsageCriteria {
  readonly start: DateBound | undefined
  readonly end: DateBound | undefined
  readonly filters: ReadonlyArray<UsageFilter>
}

export interface UsageOrdering {
  readonly sortBy: SortBy
  readonly sortOrder: SortOrder
}

export interface UsageRunView {
  readonly id: number
  readonly workflow_id: number
  readonly workflow_name: string | null
  readonly name: string
  readonly created_at: Date
  readonly call_duration_seconds: number
  readonly service_tokens: number
  readonly caller_number: string | null
  readonly called_number: string | null
  readonly direction: string
  readonly mode: string
  readonly channel: string
  readonly disposition: string | null
  readonly campaign_id: number | null
  readonly initial_context: Record<string, unknown>
  readonly gathered_context: Record<string, unknown>
  /** Short-lived signed link, or null when the run has no such artifact. */
  readonly recording_url: string | null
  readonly transcript_url: string | null
  /** The run's quality review; null when its agent does not review runs. */
  readonly quality_review: QualityReviewView | null
}

/** One page of runs; the totals cover every run the criteria select, not just this page. */
export interface UsageHistory {
  readonly runs: ReadonlyArray<UsageRunView>
  readonly total_service_tokens: number
  readonly total_duration_seconds: number
  readonly total_count: number
  readonly page: number
  readonly limit: number
  readonly total_pages: number
}

export interface DailyBreakdown {
  /** The organization's time zone, which decides where each day starts. */
  readonly timezone: string
  readonly days: ReadonlyArray<DayUsage>
  readonly total_runs: number
  readonly total_duration_seconds: number
  readonly total_minutes: number
  readonly total_service_tokens: number
}

/** Usage reports over an organization's runs; every query is scoped to the caller's organization. */
export interface UsageReportsShape {
  readonly runs: (
    principal: Principal,
    criteria: UsageCriteria,
    ordering: UsageOrdering,
    page: { readonly page: number; readonly limit: number }
  ) => Effect.Effect<UsageHistory, ValidationFailed>
  readonly dailyBreakdown: (
    principal: Principal,
    criteria: UsageCriteria
  ) => Effect.Effect<DailyBreakdown, ValidationFailed>
  /** The selected runs as CSV (header first), read from the database in batches as it is sent. */
  readonly runsCsv: (
    principal: Principal,
    criteria: UsageCriteria,
    ordering: UsageOrdering
  ) => Effect.Effect<Stream.Stream<string>, ValidationFailed>
}

export class UsageReports extends Context.Tag("talkgraph/UsageReports")<UsageReports, UsageReportsShape>() {}
