import { Either } from "effect"
import type { CreatedWindow } from "./dates.ts"

export interface DayUsage {
  /** Calendar day in the organization's time zone, `YYYY-MM-DD`. */
  readonly date: string
  readonly runs: number
  readonly duration_seconds: number
  readonly minutes: number
  readonly service_tokens: number
}

export interface DayTotals {
  readonly date: string
  readonly runs: number
  readonly duration_seconds: number
  readonly service_tokens: number
}

/** Ten years of days: more than any chart shows, few enough to answer in one response. */
export const MAX_BREAKDOWN_DAYS = 3660

const DAY_MS = 86_400_000

/** A stored time zone that this runtime does not know is read as UTC rather than failing the report. */
export const knownTimeZone = (timeZone: string): string => {
  try {
    new Intl.DateTimeFormat("en-CA", { timeZone })
    return timeZone
  } catch {
    return "UTC"
  }
}

/** The calendar day (`YYYY-MM-DD`) an instant falls on in a time zone. */
export const localDate = (instant: Date, timeZone: string): string => {
  const parts = new Intl.DateTimeFormat("en-CA", { timeZone, year: "numeric", month: "2-digit", day: "2-digit" })
    .formatToParts(instant)
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? ""
  return `${part("year")}-${part("month")}-${part("day")}`
}

const nextDay = (date: string): string => new Date(Date.parse(`${date}T00:00:00Z`) + DAY_MS).toISOString().slice(0, 10)

const daysBetween = (first: string, last: string): number =>
  Math.round((Date.parse(`${last}T00:00:00Z`) - Date.parse(`${first}T00:00:00Z`)) / DAY_MS) + 1

const minutesOf = (seconds: number) => Math.round((seconds / 60) * 100) / 100

/**
 * Every day of the window, days without runs included (a chart shows a gap as zero, not as a
 * missing point). An open end of the window stops at the first or last day that has runs.
 */
export const denseDailySeries = (
  totals: ReadonlyArray<DayTotals>,
  window: CreatedWindow,
  timeZone: string
): Either.Either<ReadonlyArray<DayUsage>, string> => {
  const byDate = new Map(totals.map((day) => [day.date, day]))
  const dates = totals.map((day) => day.date).sort()
  const first = window.from ? localDate(window.from, timeZone) : dates[0]
  const last = window.before ? localDate(new Date(window.before.getTime() - 1), timeZone) : dates.at(-1)
  if (first === undefined || last === undefined || first > last) return Either.right([])
  if (daysBetween(first, last) > MAX_BREAKDOWN_DAYS) {
    return Either.left(`covers more than ${MAX_BREAKDOWN_DAYS} days; narrow start_date and end_date`)
  }
  const series: Array<DayUsage> = []
  for (let date = first; date <= last; date = nextDay(date)) {
    const day = byDate.get(date)
    const seconds = day?.duration_seconds ?? 0
    series.push({
      date,
      runs: day?.runs ?? 0,
      duration_seconds: seconds,
      minutes: minutesOf(seconds),
      service_tokens: day?.service_tokens ?? 0
    })
  }
  return Either.right(series)
}
