import type { ScheduleConfig } from "./campaignSettings.ts"

/**
 * Calling windows in the campaign's IANA time zone. Slots are wall-clock times, so a slot keeps its
 * local hours across daylight-saving changes; a start that falls in a skipped hour opens at the
 * first instant that exists after it.
 */

interface LocalTime {
  readonly year: number
  readonly month: number
  readonly day: number
  readonly hour: number
  readonly minute: number
  /** 0 = Monday … 6 = Sunday, as the API numbers days. */
  readonly weekday: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterFor = (zone: string) => {
  let formatter = formatters.get(zone)
  if (!formatter) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
      weekday: "short"
    })
    formatters.set(zone, formatter)
  }
  return formatter
}

const WEEKDAYS = ["Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"]

export const localTime = (instant: number, zone: string): LocalTime & { readonly second: number } => {
  const parts = Object.fromEntries(
    formatterFor(zone).formatToParts(new Date(instant)).map((part) => [part.type, part.value])
  )
  return {
    year: Number(parts.year),
    month: Number(parts.month),
    day: Number(parts.day),
    hour: Number(parts.hour),
    minute: Number(parts.minute),
    second: Number(parts.second),
    weekday: WEEKDAYS.indexOf(parts.weekday!)
  }
}

/** Offset of `zone` from UTC at `instant`, in milliseconds. */
const offsetAt = (instant: number, zone: string) => {
  const local = localTime(instant, zone)
  const asUtc = Date.UTC(local.year, local.month - 1, local.day, local.hour, local.minute, local.second)
  return asUtc - Math.floor(instant / 1000) * 1000
}

/**
 * The instant a wall-clock time occurs in `zone`. Ambiguous times (clocks going back) take the
 * first occurrence; skipped times (clocks going forward) take the instant the clocks jump to.
 */
export const instantOf = (
  year: number,
  month: number,
  day: number,
  hour: number,
  minute: number,
  zone: string
): number => {
  const wall = Date.UTC(year, month - 1, day, hour, minute)
  const candidates = [offsetAt(wall - 86_400_000, zone), offsetAt(wall + 86_400_000, zone)]
  const exact = candidates
    .map((offset) => wall - offset)
    .filter((instant) => {
      const local = localTime(instant, zone)
      return local.hour === hour && local.minute === minute && local.day === day
    })
    .sort((a, b) => a - b)
  if (exact.length > 0) return exact[0]!
  // Skipped by a forward jump: the wall time never happens; find the instant the clocks jump.
  let before = Math.min(...candidates.map((offset) => wall - offset))
  let after = Math.max(...candidates.map((offset) => wall - offset))
  const offsetBefore = offsetAt(before, zone)
  while (after - before > 60_000) {
    const middle = before + Math.floor((after - before) / 2)
    if (offsetAt(middle, zone) === offsetBefore) before = middle
    else after = middle
  }
  // Transitions fall on whole minutes, and the jump lies in (after - 1 min, after].
  return Math.floor(after / 60_000) * 60_000
}

const minutesOf = (clock: string) => {
  const [hours, minutes] = clock.split(":").map(Number)
  return hours! * 60 + minutes!
}

/** Whether calls may be placed at `instant`. A missing or disabled schedule allows any time. */
export const isWithinSchedule = (schedule: ScheduleConfig | null, instant: number): boolean => {
  if (!schedule || !schedule.enabled) return true
  const local = localTime(instant, schedule.timezone)
  const minute = local.hour * 60 + local.minute
  return schedule.slots.some((slot) =>
    slot.day_of_week === local.weekday && minute >= minutesOf(slot.start_time) && minute < minutesOf(slot.end_time)
  )
}

/**
 * The next instant at or after `instant` inside a window (itself when already inside), or null
 * when the schedule has no slots at all. Looks at most eight local days ahead, which covers a week.
 */
export const nextWindowStart = (schedule: ScheduleConfig | null, instant: number): number | null => {
  if (isWithinSchedule(schedule, instant)) return instant
  if (!schedule || schedule.slots.length === 0) return null
  const zone = schedule.timezone
  const today = localTime(instant, zone)
  let best: number | null = null
  for (let offset = 0; offset <= 8; offset++) {
    const date = new Date(Date.UTC(today.year, today.month - 1, today.day + offset))
    const weekday = (date.getUTCDay() + 6) % 7
    for (const slot of schedule.slots) {
      if (slot.day_of_week !== weekday) continue
      const start = minutesOf(slot.start_time)
      const opens = instantOf(
        date.getUTCFullYear(),
        date.getUTCMonth() + 1,
        date.getUTCDate(),
        Math.floor(start / 60),
        start % 60,
        zone
      )
      if (opens > instant && (best === null || opens < best)) best = opens
    }
    if (best !== null) return best
  }
  return best
}
