import type { CreatedWindow } from "./dates.ts"
import type { UsageFilter } from "./filters.ts"
import type { ProfileFilter } from "./rollup.ts"

/**
 * Totals of a report that filters on duration can come from `run_monthly_usage` (per organization,
 * UTC month, duration bucket, direction, channel and disposition) when its other filters are on
 * direction, channel and disposition, each at most once. The daily rollup cannot answer them: a
 * duration range cuts through its rows. Whole months × whole buckets come from the rollup; runs in
 * the partial months at the window's ends, and runs in the partial buckets at the range's ends,
 * are counted from `runs` (through indexes that hold every column these filters read).
 */
export interface DurationRollup {
  readonly duration: { readonly min: number | null; readonly max: number | null }
  readonly profile: ReadonlyArray<ProfileFilter>
}

/**
 * Seconds per duration bucket. Narrower buckets leave fewer runs to count at the range's ends,
 * wider ones fewer rollup rows to sum; 10 s keeps both to a few thousand rows at a million runs.
 */
export const DURATION_BUCKET_SECONDS = 10

export const durationBucketOf = (seconds: number) => Math.floor(seconds / DURATION_BUCKET_SECONDS)

export const durationRollup = (filters: ReadonlyArray<UsageFilter>): DurationRollup | undefined => {
  const tags = new Set(filters.map((filter) => filter._tag))
  if (tags.size !== filters.length) return undefined
  let duration: DurationRollup["duration"] | undefined
  const profile: Array<ProfileFilter> = []
  for (const filter of filters) {
    if (filter._tag === "Duration") duration = { min: filter.min, max: filter.max }
    else if (filter._tag === "Direction" || filter._tag === "Channel" || filter._tag === "Disposition") {
      profile.push(filter)
    } else return undefined
  }
  return duration && { duration, profile }
}

/** Whole buckets (`firstBucket` inclusive, `endBucket` exclusive, `null` when open) and the seconds left at the ends. */
export interface BucketSplit {
  readonly firstBucket: number | null
  readonly endBucket: number | null
  readonly edges: ReadonlyArray<{ readonly min: number; readonly max: number }>
}

/** `undefined` when the range holds no whole bucket (then its runs are few and counted from `runs`). */
export const splitByBucket = (range: DurationRollup["duration"]): BucketSplit | undefined => {
  const width = DURATION_BUCKET_SECONDS
  const firstBucket = range.min === null ? null : Math.ceil(range.min / width)
  const endBucket = range.max === null ? null : Math.floor((range.max + 1) / width)
  if (firstBucket !== null && endBucket !== null && firstBucket >= endBucket) return undefined
  const edges: Array<{ min: number; max: number }> = []
  if (range.min !== null && firstBucket !== null && range.min < firstBucket * width) {
    edges.push({ min: range.min, max: firstBucket * width - 1 })
  }
  if (range.max !== null && endBucket !== null && endBucket * width <= range.max) {
    edges.push({ min: endBucket * width, max: range.max })
  }
  return { firstBucket, endBucket, edges }
}

/** Whole UTC months (`firstMonth` inclusive, `endMonth` exclusive, as dates) and the partial months at the ends. */
export interface MonthSplit {
  readonly firstMonth: string | null
  readonly endMonth: string | null
  /** The whole months as a window on `created_at`. */
  readonly whole: CreatedWindow
  readonly edges: ReadonlyArray<CreatedWindow>
}

const monthStart = (ms: number) => {
  const date = new Date(ms)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth(), 1)
}
const nextMonthStart = (ms: number) => {
  const date = new Date(ms)
  return Date.UTC(date.getUTCFullYear(), date.getUTCMonth() + 1, 1)
}
const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** `undefined` when the window holds no whole month. */
export const splitByUtcMonth = (window: CreatedWindow): MonthSplit | undefined => {
  const from = window.from?.getTime()
  const before = window.before?.getTime()
  const first = from === undefined ? undefined : monthStart(from) === from ? from : nextMonthStart(from)
  const end = before === undefined ? undefined : monthStart(before)
  if (first !== undefined && end !== undefined && first >= end) return undefined
  const edges: Array<CreatedWindow> = []
  if (from !== undefined && first !== undefined && from < first) {
    edges.push({ from: new Date(from), before: new Date(first) })
  }
  if (before !== undefined && end !== undefined && end < before) {
    edges.push({ from: new Date(end), before: new Date(before) })
  }
  return {
    firstMonth: first === undefined ? null : dayOf(first),
    endMonth: end === undefined ? null : dayOf(end),
    whole: { from: first === undefined ? null : new Date(first), before: end === undefined ? null : new Date(end) },
    edges
  }
}
