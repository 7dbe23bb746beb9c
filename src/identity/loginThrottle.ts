/**
 * Login throttling policy: an account gets at most `maxFailures` password checks inside
 * `windowSeconds` without a successful login; the attempt that takes the last one locks the
 * account for `lockSeconds`, and attempts during the lock are refused unchecked. An attempt is
 * counted when it is admitted, *before* its password is checked: checks still running are
 * already spent, so a burst of concurrent guesses gets no more checks than the policy allows.
 * A lock is neither extended nor lifted by attempts during it; a successful login clears the count.
 */
export interface ThrottlePolicy {
  readonly maxFailures: number
  readonly windowSeconds: number
  readonly lockSeconds: number
}

export const defaultThrottlePolicy: ThrottlePolicy = { maxFailures: 5, windowSeconds: 900, lockSeconds: 300 }

/** Seconds the caller must wait before `lockedUntil`, at least one: a refusal never says "retry in 0 s". */
export const retryAfterSeconds = (lockedUntil: Date | null, now: Date): number =>
  Math.max(1, lockedUntil ? Math.ceil((lockedUntil.getTime() - now.getTime()) / 1000) : 1)
