import type { CircuitBreakerConfig } from "./campaignSettings.ts"

/** One finished call as the breaker sees it. Each outcome is its own entry, even at the same instant. */
export interface BreakerOutcome {
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
export const isBreakerFailure = (outcome: string) => outcome === "failed" || outcome === "error"

/** Outcomes inside the sliding window ending at `now`. */
export const withinWindow = (
  outcomes: ReadonlyArray<BreakerOutcome>,
  config: CircuitBreakerConfig,
  now: number
): Array<BreakerOutcome> => outcomes.filter((outcome) => outcome.at > now - config.window_seconds * 1000 && outcome.at <= now)

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
  const failures = recent.filter((outcome) => outcome.failed).length
  const failureRatio = recent.length === 0 ? 0 : failures / recent.length
  return {
    tripped: config.enabled && recent.length >= config.min_calls_in_window && failureRatio >= config.failure_threshold,
    calls: recent.length,
    failures,
    failureRatio
  }
}
