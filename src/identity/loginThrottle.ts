/**
 * Login throttling policy: an account gets at most `maxFailures` password checks inside
 * `windowSeconds` without a successful login; the attempt that uses the last one locks the
 * account for `lockSeconds`, and attempts during the lock are refused unchecked.
 */
export interface ThrottlePolicy {
  readonly maxFailures: number
  readonly windowSeconds: number
  readonly lockSeconds: number
}

export const defaultThrottlePolicy: ThrottlePolicy = { maxFailures: 5, windowSeconds: 900, lockSeconds: 300 }

/**
 * What is kept per account. `attempts` counts attempts admitted since the last success, each one
 * counted *before* its password is checked: checks still running are already spent, so a burst of
 * concurrent guesses cannot get more checks than the policy allows. A success deletes the record.
 */
export interface AttemptRecord {
  readonly attempts: number
  readonly windowStartedAt: Date
  readonly lockedUntil: Date | null
}

export type Admission =
  | { readonly admitted: true; readonly record: AttemptRecord }
  | { readonly admitted: false; readonly retryAfterSeconds: number }

/** Seconds the caller must wait, or 0 when an attempt may go ahead. */
export const retryAfterSeconds = (record: AttemptRecord | undefined, now: Date): number =>
  record?.lockedUntil && record.lockedUntil > now ? Math.ceil((record.lockedUntil.getTime() - now.getTime()) / 1000) : 0

/**
 * Decides one attempt at `now`. Refused during a lock, and the lock is left as it was: neither
 * extended (the owner can get back in when it ends) nor cleared by anything but its expiry.
 * After an expired lock or window the count starts again.
 */
export const admitAttempt = (record: AttemptRecord | undefined, now: Date, policy: ThrottlePolicy): Admission => {
  const wait = retryAfterSeconds(record, now)
  if (wait > 0) return { admitted: false, retryAfterSeconds: wait }
  const fresh = record === undefined || record.lockedUntil !== null ||
    now.getTime() - record.windowStartedAt.getTime() >= policy.windowSeconds * 1000
  const attempts = fresh ? 1 : record.attempts + 1
  return {
    admitted: true,
    record: {
      attempts,
      windowStartedAt: fresh ? now : record.windowStartedAt,
      lockedUntil: attempts >= policy.maxFailures ? new Date(now.getTime() + policy.lockSeconds * 1000) : null
    }
  }
}
