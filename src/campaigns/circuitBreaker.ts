import type { CircuitBreakerConfig } from "./campaignSettings.ts"

/** One finished call as the breaker sees it. Each outcome is its own entry, even at the same instant. */
interface BreakerOutcome {
  readonly at: number
  readonly failed: boolean
}

export interface BreakerVerdict {
  readonly tripped: boolean
  readonly calls: number
  readonly failures: number
  readonly failureRatio: number
}

/**
 * Outcomes that count against the carrier path: the call could not be placed or the carrier failed
 * it. Busy, no-answer, voicemail and cancelled calls reached a person's line and say nothing about
 * the campaign being broken.
 */
export const BREAKER_FAILURES = ["failed", "error"] as const

export const isBreakerFailure = (outcome: string) => (BREAKER_FAILURES as ReadonlyArray<string>).includes(outcome)

/** Outcomes inside the sliding window ending at `now`. */
export const withinWindow = (
  outcomes: ReadonlyArray<BreakerOutcome>,
  config: CircuitBreakerConfig,
  now: number
): Array<BreakerOutcome> =>
  outcomes.filter((outcome) => outcome.at > now - config.window_seconds * 1000 && outcome.at <= now)

/**
 * Trips when the window holds at least `min_calls_in_window` outcomes and the share of failures
 * reaches `failure_threshold`.
 */
export const evaluateBreaker = (
  outcomes: ReadonlyArray<BreakerOutcome>,
  config: CircuitBreakerConfig,
  now: number
): BreakerVerdict => {
  const recent = withinWindow(outcomes, config, now)
  return verdictOf(recent.length, recent.filter((outcome) => outcome.failed).length, config)
}

/** The verdict on a window already counted (by the database): `calls` outcomes, `failures` of them failures. */
export const verdictOf = (calls: number, failures: number, config: CircuitBreakerConfig): BreakerVerdict => {
  const failureRatio = calls === 0 ? 0 : failures / calls
  return {
    tripped: config.enabled && calls >= config.min_calls_in_window && failureRatio >= config.failure_threshold,
    calls,
    failures,
    failureRatio
  }
}
