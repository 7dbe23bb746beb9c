import { Schema } from "effect"

const ClockTime = Schema.String.pipe(
  Schema.pattern(/^([01][0-9]|2[0-3]):[0-5][0-9]$/, { message: () => "a time of day as HH:MM (24-hour)" })
)
const IsoDate = Schema.String.pipe(
  Schema.pattern(/^[0-9]{4}-(0[1-9]|1[0-2])-(0[1-9]|[12][0-9]|3[01])$/, { message: () => "a date as YYYY-MM-DD" })
)

/** When recipients may be called, in each recipient's own local time. */
export const CallingHours = Schema.Struct({
  enabled: Schema.Boolean,
  start: ClockTime.annotations({ description: "Local time calls may start (inclusive), e.g. 09:00" }),
  end: ClockTime.annotations({ description: "Local time calls must have started by (exclusive), e.g. 20:00" }),
  days: Schema.Array(Schema.Int.pipe(Schema.between(1, 7))).pipe(Schema.minItems(1), Schema.maxItems(7)).annotations({
    description: "ISO days of the week calls are allowed on: 1 = Monday … 7 = Sunday"
  }),
  holidays: Schema.Array(IsoDate).pipe(Schema.maxItems(366)).annotations({
    description: "Local dates on which nobody is called"
  })
}).pipe(
  Schema.filter((hours) => hours.start < hours.end || "start must be before end")
).annotations({ identifier: "CallingHours" })
export type CallingHours = typeof CallingHours.Type

export const defaultCallingHours: CallingHours = {
  enabled: false,
  start: "09:00",
  end: "20:00",
  days: [1, 2, 3, 4, 5, 6],
  holidays: []
}

interface LocalTime {
  readonly date: string
  readonly isoDay: number
  readonly minutes: number
  /** The zone's offset from UTC at that instant, in milliseconds. */
  readonly offsetMs: number
}

const formatters = new Map<string, Intl.DateTimeFormat>()
const formatterOf = (zone: string) => {
  let formatter = formatters.get(zone)
  if (formatter === undefined) {
    formatter = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit"
    })
    formatters.set(zone, formatter)
  }
  return formatter
}

/** The wall clock in `zone` at `instant` (whole seconds). */
export const localTime = (zone: string, instant: number): LocalTime => {
  const parts: Record<string, number> = {}
  for (const part of formatterOf(zone).formatToParts(new Date(instant))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value)
  }
  const { year, month, day, hour, minute, second } = parts as Record<string, number>
  const wall = Date.UTC(year!, month! - 1, day!, hour!, minute!, second!)
  const date = `${String(year).padStart(4, "0")}-${String(month).padStart(2, "0")}-${String(day).padStart(2, "0")}`
  return {
    date,
    isoDay: ((new Date(Date.UTC(year!, month! - 1, day!)).getUTCDay() + 6) % 7) + 1,
    minutes: hour! * 60 + minute!,
    offsetMs: wall - Math.floor(instant / 1000) * 1000
  }
}

const minutesOf = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5))

/** Whether a recipient in `zone` may be called at `instant`. */
export const openIn = (hours: CallingHours, zone: string, instant: number): boolean => {
  const local = localTime(zone, instant)
  return hours.days.includes(local.isoDay) && !hours.holidays.includes(local.date) &&
    local.minutes >= minutesOf(hours.start) && local.minutes < minutesOf(hours.end)
}

/** Allowed only when the window is open in every zone the recipient may be in. */
export const openInAll = (hours: CallingHours, zones: ReadonlyArray<string>, instant: number): boolean =>
  !hours.enabled || zones.every((zone) => openIn(hours, zone, instant))

/** The instant `clock` strikes on local `date` in `zone` (after a DST gap's jump, if it falls in one). */
const instantOfLocal = (zone: string, date: string, clock: string): number => {
  const wall = Date.UTC(Number(date.slice(0, 4)), Number(date.slice(5, 7)) - 1, Number(date.slice(8, 10))) +
    minutesOf(clock) * 60_000
  const first = wall - localTime(zone, wall).offsetMs
  const second = wall - localTime(zone, first).offsetMs
  return Math.max(first, second)
}

/** Days looked ahead for the next opening: enough for any week with holidays. */
const LOOKAHEAD_DAYS = 21

/**
 * The first instant at or after `instant` when the window is open in every zone, or undefined when
 * none comes within LOOKAHEAD_DAYS. The common window opens when its last zone opens, so only
 * `instant` itself and each zone's daily opening times need checking.
 */
export const nextOpening = (hours: CallingHours, zones: ReadonlyArray<string>, instant: number): number | undefined => {
  if (openInAll(hours, zones, instant)) return instant
  const candidates: Array<number> = []
  for (const zone of zones) {
    for (let day = -1; day <= LOOKAHEAD_DAYS; day++) {
      const date = localTime(zone, instant + day * 86_400_000).date
      const opens = instantOfLocal(zone, date, hours.start)
      if (opens > instant) candidates.push(opens)
    }
  }
  candidates.sort((a, b) => a - b)
  return candidates.find((candidate) => openInAll(hours, zones, candidate))
}
