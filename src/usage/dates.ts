import { Either } from "effect"
import { isStorableInstant, LATEST_STORABLE } from "../domain/storableInstants.ts"

const ISO_8601 =
  /^(\d{4})-(\d{2})-(\d{2})(?:[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?([Zz]|[+-]\d{2}:?\d{2})?)?$/

const MS = { minute: 60_000, second: 1_000, day: 86_400_000 } as const

/** An instant given in a query, and the span its precision covers (a day, a second, a millisecond…). */
export interface DateBound {
  readonly instant: Date
  readonly spanMs: number
}

const offsetMinutes = (zone: string | undefined): number => {
  if (zone === undefined || zone.toUpperCase() === "Z") return 0
  const digits = zone.replace(":", "")
  const sign = digits.startsWith("-") ? -1 : 1
  return sign * (Number(digits.slice(1, 3)) * 60 + Number(digits.slice(3, 5)))
}

/**
 * Reads an ISO 8601 date or date-time; without an offset it is UTC (spec: "ISO 8601 date-time
 * string, UTC"). Calendar-impossible values (Feb 30, hour 24) are refused rather than rolled over.
 */
export const parseDateBound = (raw: string): Either.Either<DateBound, string> => {
  const match = ISO_8601.exec(raw.trim())
  if (!match) return Either.left("must be an ISO 8601 date-time such as 2024-05-01T00:00:00Z")
  const [, y, mo, d, h, mi, s, fraction, zone] = match
  const [year, month, day, hour, minute, second] = [y, mo, d, h ?? "0", mi ?? "0", s ?? "0"].map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number
  ]
  const offset = offsetMinutes(zone)
  if (hour > 23 || minute > 59 || second > 59 || Math.abs(offset) > 14 * 60) {
    return Either.left("is not a valid time of day or UTC offset")
  }
  const millis = fraction ? Number(fraction.slice(0, 3).padEnd(3, "0")) : 0
  const local = new Date(0)
  local.setUTCFullYear(year, month - 1, day)
  local.setUTCHours(hour, minute, second, millis)
  if (local.getUTCFullYear() !== year || local.getUTCMonth() !== month - 1 || local.getUTCDate() !== day) {
    return Either.left("is not a calendar date")
  }
  const instant = new Date(local.getTime() - offset * 60_000)
  if (!isStorableInstant(instant)) return Either.left("must be between 0001-01-01 and 9999-12-31 (UTC)")
  const spanMs = h === undefined
    ? MS.day
    : s === undefined
    ? MS.minute
    : fraction === undefined
    ? MS.second
    : 10 ** Math.max(0, 3 - fraction.length)
  return Either.right({ instant, spanMs })
}

/** The report's window on `created_at`: `from` inclusive, `before` exclusive; `null` is unbounded. */
export interface CreatedWindow {
  readonly from: Date | null
  readonly before: Date | null
}

/**
 * Both bounds are inclusive (spec). The end covers everything its precision names, so
 * `end_date=2024-05-31` includes all of May 31 and `…T23:59:59Z` includes 23:59:59.5. An end
 * covering the last storable instant (`end_date=9999-12-31`) leaves the window open: nothing is
 * stored later, and the instant after it cannot be written to the database.
 */
export const createdWindow = (start: DateBound | undefined, end: DateBound | undefined): CreatedWindow => {
  const before = end ? new Date(end.instant.getTime() + end.spanMs) : null
  return {
    from: start ? start.instant : null,
    before: before && before.getTime() > LATEST_STORABLE.getTime() ? null : before
  }
}

/** The window for two parsed bounds; an end before the start selects nothing and is refused instead. */
export const checkedWindow = (
  start: DateBound | undefined,
  end: DateBound | undefined
): Either.Either<CreatedWindow, string> =>
  start && end && end.instant.getTime() < start.instant.getTime()
    ? Either.left("end_date must not be before start_date")
    : Either.right(createdWindow(start, end))
