import { describe, expect, it } from "vitest"
import { circuitBreakerDefaults, retryDefaults, type ScheduleConfig } from "../src/campaign/campaignSettings.ts"
import { evaluateBreaker } from "../src/campaign/circuitBreaker.ts"
import { emptyLog, logFrom, recordDispatch, waitBeforeDispatch } from "../src/campaign/dispatchRate.ts"
import { afterOutcome } from "../src/campaign/retryPolicy.ts"
import { instantOf, isWithinSchedule, nextWindowStart } from "../src/campaign/scheduleWindow.ts"

/** Simulates a dialer that dispatches as soon as the log allows, for `durationMs`. */
const simulate = (perSecond: number, durationMs: number) => {
  let log = emptyLog(perSecond)
  const sent: Array<number> = []
  let now = 0
  while (now < durationMs) {
    const wait = waitBeforeDispatch(log, now)
    now += wait
    if (now >= durationMs) break
    sent.push(now)
    log = recordDispatch(log, now)
  }
  return sent
}

const maxInAnyWindow = (times: ReadonlyArray<number>) => {
  let max = 0
  for (let i = 0, j = 0; i < times.length; i++) {
    while (times[i]! - times[j]! >= 1000) j++
    max = Math.max(max, i - j + 1)
  }
  return max
}

describe("dispatch rate", () => {
  it.each([1, 5, 20, 100])("never exceeds %i calls in any one-second window, and achieves the rate", (rate) => {
    const sent = simulate(rate, 60_000)
    expect(maxInAnyWindow(sent)).toBe(rate)
    expect(sent.length).toBe(rate * 60)
  })

  it("after a takeover, honours dispatches the previous owner made in the last second", () => {
    const log = logFrom(2, [9_500, 9_800])
    expect(waitBeforeDispatch(log, 10_000)).toBe(500)
    expect(waitBeforeDispatch(log, 10_500)).toBe(0)
  })
})

describe("circuit breaker", () => {
  const config = { ...circuitBreakerDefaults, failure_threshold: 0.5, window_seconds: 60, min_calls_in_window: 4 }
  const outcomes = (spec: string, start = 0) => [...spec].map((c, i) => ({ at: start + i * 1000, failed: c === "x" }))

  it("stays closed below the minimum number of calls, whatever the ratio", () => {
    expect(evaluateBreaker(outcomes("xxx"), config, 3_000).tripped).toBe(false)
  })

  it("trips at the threshold once the window holds enough calls", () => {
    const verdict = evaluateBreaker(outcomes("x.x."), config, 4_000)
    expect(verdict).toEqual({ tripped: true, calls: 4, failures: 2, failureRatio: 0.5 })
    expect(evaluateBreaker(outcomes("x..."), config, 4_000).tripped).toBe(false)
  })

  it("counts outcomes recorded at the same instant separately", () => {
    const sameInstant = [1, 2, 3, 4].map(() => ({ at: 5_000, failed: true }))
    expect(evaluateBreaker(sameInstant, config, 5_000)).toMatchObject({ tripped: true, calls: 4 })
  })

  it("forgets outcomes older than the window", () => {
    expect(evaluateBreaker(outcomes("xxxx"), config, 64_000).tripped).toBe(false)
  })

  it("never trips when disabled", () => {
    expect(evaluateBreaker(outcomes("xxxxxx"), { ...config, enabled: false }, 6_000).tripped).toBe(false)
  })
})

describe("retry policy", () => {
  it.each([
    ["busy", 1, "retry"],
    ["no-answer", 2, "retry"],
    ["no-answer", 3, "done"],
    ["voicemail", 1, "done"],
    ["failed", 1, "done"],
    ["canceled", 1, "done"],
    ["completed", 1, "done"]
  ] as const)("with the defaults, %s after attempt %i → %s", (outcome, attempt, kind) => {
    expect(afterOutcome(retryDefaults, outcome, attempt, 0).kind).toBe(kind)
  })

  it("retries voicemail when configured, after the delay", () => {
    const config = { ...retryDefaults, retry_on_voicemail: true, retry_delay_seconds: 300 }
    expect(afterOutcome(config, "voicemail", 1, 1_000)).toEqual({ kind: "retry", at: 301_000 })
  })

  it("reports success only for completed calls, and retries nothing when disabled", () => {
    expect(afterOutcome(retryDefaults, "completed", 1, 0)).toEqual({ kind: "done", succeeded: true })
    expect(afterOutcome({ ...retryDefaults, enabled: false }, "busy", 1, 0)).toEqual({ kind: "done", succeeded: false })
  })
})

describe("schedule windows", () => {
  const weekdays9to17 = (timezone: string): ScheduleConfig => ({
    enabled: true,
    timezone,
    slots: [0, 1, 2, 3, 4].map((day) => ({ day_of_week: day, start_time: "09:00", end_time: "17:00" }))
  })

  it("is open inside a slot and closed at its end (start inclusive, end exclusive)", () => {
    const schedule = weekdays9to17("Europe/Berlin")
    // Monday 2026-11-23 in Berlin (UTC+1)
    expect(isWithinSchedule(schedule, Date.parse("2026-11-23T08:00:00Z"))).toBe(true)
    expect(isWithinSchedule(schedule, Date.parse("2026-11-23T07:59:00Z"))).toBe(false)
    expect(isWithinSchedule(schedule, Date.parse("2026-11-23T15:59:00Z"))).toBe(true)
    expect(isWithinSchedule(schedule, Date.parse("2026-11-23T16:00:00Z"))).toBe(false)
  })

  it("sleeps from Friday evening to Monday morning", () => {
    const schedule = weekdays9to17("America/New_York")
    const fridayEvening = Date.parse("2026-11-27T23:00:00Z") // 18:00 Friday in New York
    expect(new Date(nextWindowStart(schedule, fridayEvening)!).toISOString()).toBe("2026-11-30T14:00:00.000Z")
  })

  it("keeps local hours across the spring-forward change", () => {
    const schedule = weekdays9to17("America/New_York")
    // Friday 2026-03-06 after hours (EST, UTC-5); DST starts Sunday 2026-03-08; Monday opens at 09:00 EDT (UTC-4)
    expect(new Date(nextWindowStart(schedule, Date.parse("2026-03-06T23:00:00Z"))!).toISOString()).toBe(
      "2026-03-09T13:00:00.000Z"
    )
  })

  it("keeps local hours across the fall-back change", () => {
    const schedule = weekdays9to17("America/New_York")
    expect(new Date(nextWindowStart(schedule, Date.parse("2026-10-30T22:00:00Z"))!).toISOString()).toBe(
      "2026-11-02T14:00:00.000Z"
    )
  })

  it("opens a slot that starts inside a skipped hour when the clocks land", () => {
    expect(new Date(instantOf(2026, 3, 8, 2, 30, "America/New_York")).toISOString()).toBe("2026-03-08T07:00:00.000Z")
    const schedule: ScheduleConfig = {
      enabled: true,
      timezone: "America/New_York",
      slots: [{ day_of_week: 6, start_time: "02:30", end_time: "04:00" }]
    }
    expect(new Date(nextWindowStart(schedule, Date.parse("2026-03-08T05:00:00Z"))!).toISOString()).toBe(
      "2026-03-08T07:00:00.000Z"
    )
  })

  it("allows any time without a schedule or when disabled", () => {
    expect(nextWindowStart(null, 123)).toBe(123)
    expect(isWithinSchedule({ ...weekdays9to17("UTC"), enabled: false }, Date.parse("2026-11-29T03:00:00Z"))).toBe(true)
  })
})
