/**
 * Login throttling policy: after `maxFailures` failed logins for one email inside `windowSeconds`,
 * further attempts are refused for `lockSeconds`. A success clears the record.
 */
export interface ThrottlePolicy {
  readonly maxFailures: number
  readonly windowSeconds: number
  readonly lockSeconds: number
}

export const defaultThrottlePolicy: ThrottlePolicy = { maxFailures: 5, windowSeconds: 900, lockSeconds: 300 }

export interface FailureRecord {
  readonly failures: number
  readonly windowStartedAt: Date
  readonly lockedUntil: Date | null
}

/** Seconds the caller must wait, or 0 when an attempt may go ahead. */
export const retryAfterSeconds = (record: FailureRecord | undefined, now: Date): number =>
  record?.lockedUntil && record.lockedUntil > now ? Math.ceil((record.lockedUntil.getTime() - now.getTime()) / 1000) : 0

/** The record after one more failure at `now`. */
export const recordFailure = (record: FailureRecord | undefined, now: Date, policy: ThrottlePolicy): FailureRecord => {
  const windowOpen = record !== undefined &&
    now.getTime() - record.windowStartedAt.getTime() < policy.windowSeconds * 1000
  const failures = windowOpen ? record.failures + 1 : 1
  const windowStartedAt = windowOpen ? record.windowStartedAt : now
  const lockedUntil = failures >= policy.maxFailures ? new Date(now.getTime() + policy.lockSeconds * 1000) : null
  return { failures: lockedUntil ? 0 : failures, windowStartedAt: lockedUntil ? now : windowStartedAt, lockedUntil }
}
