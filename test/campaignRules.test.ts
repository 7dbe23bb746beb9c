import { describe, expect, it } from "vitest"
import { circuitBreakerDefaults, retryDefaults, type ScheduleConfig } from "../src/campaigns/campaignSettings.ts"
import { evaluateBreaker } from "../src/campaigns/circuitBreaker.ts"
import {
  available,
  capacityFor,
  claimTook,
  handedOut,
  nextBatch,
  pacerFrom,
  readyAt,
  sent
} from "../src/campaigns/dispatchRate.ts"
import { afterOutcome } from "../src/campaigns/retryPolicy.ts"
import { instantOf, isWithinSchedule, nextWindowStart } from "../src/campaigns/scheduleWindow.ts"

/** A repeatable stream of numbers in [0, 1), so a failing run can be replayed. */
const seeded = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2147483648
  return seed / 2147483648
}

interface Dispatcher {
  /** How long each claim transaction takes. */
  readonly claimMs?: () => number
  /** How long after it is handed out each call's request leaves (a busy event loop). */
  readonly startMs?: () => number
  /** How long each request takes to reach the carrier. */
  readonly carrierMs?: () => number
  /** How long the carrier's answer takes to come back. */
  readonly answerMs?: () => number
  /** Claim times of the previous owner's calls, for a takeover. */
  readonly previous?: ReadonlyArray<number>
  readonly start?: number
}

/**
 * Simulates the dialer's loop until `until`: claims batches as the pacer plans them, hands the
 * claimed calls out as soon as it allows, logs each call when its answer comes back, and reports
 * when the carrier saw each call and each batch's size.
 */
const simulate = (perSecond: number, until: number, dispatcher: Dispatcher = {}) => {
  const claimMs = dispatcher.claimMs ?? (() => 0)
  const startMs = dispatcher.startMs ?? (() => 0)
  const carrierMs = dispatcher.carrierMs ?? (() => 0)
  const answerMs = dispatcher.answerMs ?? (() => 0)
  let now = dispatcher.start ?? 0
  let pacer = pacerFrom(perSecond, dispatcher.previous ?? [], now)
  /** When each call's answer comes back: the dialer logs it then. */
  let answers: Array<number> = []
  const seen: Array<number> = []
  const batches: Array<number> = []
  /** Calls answered by `time` are logged, as their placements would log them. */
  const answeredBy = (time: number) => {
    for (const answer of answers.filter((at) => at <= time).sort((a, b) => a - b)) pacer = sent(pacer, answer)
    answers = answers.filter((at) => at > time)
  }
  while (now < until) {
    answeredBy(now)
    const batch = nextBatch(pacer, now)
    if (batch.claimAt > now || batch.size === 0) {
      now = Math.max(now + 1, batch.claimAt)
      continue
    }
    const took = claimMs()
    pacer = claimTook(pacer, took)
    now += took
    batches.push(batch.size)
    // The claimed calls go as soon as the pacer allows, as the dialer hands them out.
    let waiting = batch.size
    while (waiting > 0) {
      answeredBy(now)
      const count = Math.min(waiting, available(pacer, now))
      if (count === 0) {
        now = Math.max(now + 1, readyAt(pacer, now, 1))
        continue
      }
      pacer = handedOut(pacer, now, count)
      for (let call = 0; call < count; call++) {
        const arrival = now + startMs() + carrierMs()
        seen.push(arrival)
        answers.push(arrival + answerMs())
      }
      waiting -= count
    }
  }
  return { seen: seen.filter((time) => time < until).sort((a, b) => a - b), batches }
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
    const { seen } = simulate(rate, 60_000)
    expect(maxInAnyWindow(seen)).toBe(rate)
    expect(seen.length).toBe(rate * 60)
  })

  it.each([1, 5, 20, 100])(
    "at %i/s, with slow uneven claims and uneven travel both ways, keeps the rate where the carrier sees it, losing only the round trips",
    (rate) => {
      const random = seeded(rate)
      const { seen } = simulate(rate, 60_000, {
        claimMs: () => 5 + random() * 60,
        carrierMs: () => random() * 25,
        answerMs: () => random() * 25
      })
      expect(maxInAnyWindow(seen)).toBe(rate)
      // Each slot is used again a second after the carrier answered: at most 1.05 s apart here.
      expect(seen.length).toBeGreaterThanOrEqual(Math.floor((0.99 * rate * 60_000) / 1050))
    }
  )

  it.each([5, 20, 100])(
    "at %i/s, when requests leave up to 300 ms after their batch was handed out, still keeps the rate where the carrier sees it",
    (rate) => {
      const random = seeded(rate + 1)
      // A stalled event loop delays some requests a lot, and the rest a little.
      const { seen } = simulate(rate, 30_000, {
        claimMs: () => 5 + random() * 20,
        startMs: () => (random() < 0.05 ? random() * 300 : random() * 5),
        carrierMs: () => random() * 10,
        answerMs: () => random() * 10
      })
      expect(maxInAnyWindow(seen)).toBe(rate)
      expect(seen.length).toBeGreaterThanOrEqual(Math.floor((0.95 * rate * 30_000) / 1000))
    }
  )

  it.each([20, 100])(
    "at %i/s, with claims taking half a second, still reaches the rate (each claim carries more calls)",
    (rate) => {
      const random = seeded(rate + 2)
      const { seen, batches } = simulate(rate, 30_000, {
        claimMs: () => 400 + random() * 100,
        carrierMs: () => 2,
        answerMs: () => 2
      })
      expect(maxInAnyWindow(seen)).toBe(rate)
      expect(seen.length).toBeGreaterThanOrEqual(Math.floor(0.97 * rate * 30))
      expect(Math.max(...batches)).toBeLessThanOrEqual(rate)
    }
  )

  it("claims in batches at high rates: never more than the bucket, and about half as many claims as calls", () => {
    const { seen, batches } = simulate(100, 10_000)
    expect(Math.max(...batches)).toBe(capacityFor(100))
    expect(batches.length).toBeLessThanOrEqual(seen.length / 2 + capacityFor(100))
  })

  it("catches up after a stalled claim, without exceeding the rate", () => {
    let claims = 0
    // Run past the five seconds counted: batches claimed in time but handed out later count too.
    const { seen } = simulate(100, 6_000, { claimMs: () => (++claims === 30 ? 180 : 0) })
    expect(maxInAnyWindow(seen)).toBe(100)
    expect(seen.filter((time) => time < 5_000).length).toBe(500)
  })

  it("after a takeover, counts the previous owner's calls of the last second as reaching the carrier up to a second after their claim", () => {
    const { seen } = simulate(2, 13_000, { previous: [9_500, 9_800], start: 10_000 })
    // A fresh bucket would call at once; the log holds the first call until 10.5 s + 1 s.
    expect(seen[0]).toBe(11_500)
    expect(maxInAnyWindow([10_500, 10_800, ...seen])).toBe(2)
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
  it.each(
    [
      ["busy", 1, "retry"],
      ["no-answer", 2, "retry"],
      ["no-answer", 3, "done"],
      ["voicemail", 1, "done"],
      ["failed", 1, "done"],
      ["canceled", 1, "done"],
      ["completed", 1, "done"]
    ] as const
  )("with the defaults, %s after attempt %i → %s", (outcome, attempt, kind) => {
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
