import { Schema } from "effect"

/**
 * Campaign settings: their shapes, their validated ranges and the one set of defaults used by the
 * API and by the dialer alike (docs/architecture.md, "Campaigns"). A request may omit any field; the
 * stored and returned value always has every field filled.
 */

const int = (min: number, max: number) => Schema.Int.pipe(Schema.between(min, max))

export const RetryConfig = Schema.Struct({
  enabled: Schema.Boolean,
  max_retries: int(0, 10),
  retry_delay_seconds: int(30, 86_400),
  retry_on_busy: Schema.Boolean,
  retry_on_no_answer: Schema.Boolean,
  retry_on_voicemail: Schema.Boolean
}).annotations({ identifier: "RetryConfigResponse" })
export type RetryConfig = typeof RetryConfig.Type

/** Busy and unanswered calls are retried twice, two minutes apart; voicemail is not (it was delivered). */
export const retryDefaults: RetryConfig = {
  enabled: true,
  max_retries: 2,
  retry_delay_seconds: 120,
  retry_on_busy: true,
  retry_on_no_answer: true,
  retry_on_voicemail: false
}

const isTimeZone = (zone: string) => {
  try {
    new Intl.DateTimeFormat("en-US", { timeZone: zone })
    return true
  } catch {
    return false
  }
}

const ClockTime = Schema.String.pipe(
  Schema.pattern(/^([01]\d|2[0-3]):[0-5]\d$|^24:00$/, {
    message: () => "Expected a time of day as HH:MM (00:00 to 24:00)"
  })
)

export const ScheduleSlot = Schema.Struct({
  day_of_week: int(0, 6).annotations({ description: "0 = Monday … 6 = Sunday" }),
  start_time: ClockTime,
  end_time: ClockTime
}).pipe(
  Schema.filter((slot) => slot.start_time < slot.end_time || "start_time must be before end_time"),
  Schema.annotations({ identifier: "ScheduleSlot" })
)

export const ScheduleConfig = Schema.Struct({
  enabled: Schema.Boolean,
  timezone: Schema.String.pipe(Schema.filter((zone) => isTimeZone(zone) || `Unknown IANA time zone "${zone}"`)),
  slots: Schema.Array(ScheduleSlot).pipe(Schema.maxItems(50))
}).pipe(
  Schema.filter((schedule) =>
    !schedule.enabled || schedule.slots.length > 0 || "An enabled schedule needs at least one slot"
  ),
  Schema.annotations({ identifier: "ScheduleConfigResponse" })
)
export type ScheduleConfig = typeof ScheduleConfig.Type

export const scheduleDefaults: Pick<ScheduleConfig, "enabled" | "timezone"> = { enabled: true, timezone: "UTC" }

export const CircuitBreakerConfig = Schema.Struct({
  enabled: Schema.Boolean,
  failure_threshold: Schema.Number.pipe(Schema.between(0, 1)),
  window_seconds: int(30, 3600),
  min_calls_in_window: int(1, 1000)
}).annotations({ identifier: "CircuitBreakerConfigResponse" })
export type CircuitBreakerConfig = typeof CircuitBreakerConfig.Type

/** On by default, in the API and at runtime alike: half the calls of the last two minutes failing pauses the campaign. */
export const circuitBreakerDefaults: CircuitBreakerConfig = {
  enabled: true,
  failure_threshold: 0.5,
  window_seconds: 120,
  min_calls_in_window: 5
}

export const MaxConcurrency = int(1, 100)
export const RateLimitPerSecond = int(1, 100)
export const rateLimitDefault = 1

/**
 * Request forms: every field optional, merged over the defaults (create) or the stored value
 * (PATCH). `null` for a whole setting asks for its default (create and PATCH alike).
 */
export const RetryConfigPatch = Schema.partial(RetryConfig)
export type RetryConfigPatch = typeof RetryConfigPatch.Type
export const CircuitBreakerPatch = Schema.partial(CircuitBreakerConfig)
export type CircuitBreakerPatch = typeof CircuitBreakerPatch.Type
export const ScheduleConfigPatch = Schema.Struct({
  enabled: Schema.optional(Schema.Boolean),
  timezone: Schema.optional(Schema.String),
  slots: Schema.optional(Schema.Array(ScheduleSlot).pipe(Schema.maxItems(50)))
})
export type ScheduleConfigPatch = typeof ScheduleConfigPatch.Type

/** The fields a request actually set (an absent field keeps the base value). */
const defined = <T extends object>(value: T): { [K in keyof T]?: Exclude<T[K], undefined> } =>
  Object.fromEntries(Object.entries(value).filter(([, field]) => field !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>
  }

export const mergeRetry = (base: RetryConfig, patch: RetryConfigPatch | null | undefined): RetryConfig =>
  patch === null ? retryDefaults : ({ ...base, ...defined(patch ?? {}) }) as RetryConfig

export const mergeCircuitBreaker = (
  base: CircuitBreakerConfig,
  patch: CircuitBreakerPatch | null | undefined
): CircuitBreakerConfig =>
  patch === null ? circuitBreakerDefaults : ({ ...base, ...defined(patch ?? {}) }) as CircuitBreakerConfig

export const mergeRateLimit = (base: number, requested: number | null | undefined): number =>
  requested === null ? rateLimitDefault : requested ?? base

/** `null` clears the schedule (dial at any time); a partial object is merged over the stored one. */
export const mergeSchedule = (
  base: ScheduleConfig | null,
  patch: ScheduleConfigPatch | null | undefined
): ScheduleConfig | null => {
  if (patch === undefined) return base
  if (patch === null) return null
  return { ...scheduleDefaults, slots: [], ...(base ?? {}), ...defined(patch) } as ScheduleConfig
}

/** The merged settings must still satisfy every range and rule, whichever request shaped them. */
export const validateSchedule = Schema.decodeUnknownEither(ScheduleConfig, { errors: "all" })
