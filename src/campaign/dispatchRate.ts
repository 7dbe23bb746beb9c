/**
 * Exact dispatch rate: at most `perSecond` calls in ANY one-second window, not merely on average.
 * A token bucket with a burst would allow twice the rate across a window boundary, so this keeps
 * the send times of the last `perSecond` dispatches and waits until the oldest is a second old.
 */
export interface DispatchLog {
  readonly perSecond: number
  /** Epoch milliseconds of recent dispatches, oldest first, at most `perSecond` of them. */
  readonly recent: ReadonlyArray<number>
}

export const WINDOW_MS = 1000

export const emptyLog = (perSecond: number): DispatchLog => ({ perSecond, recent: [] })

/** Milliseconds to wait before the next dispatch may go at `now` (0: go now). */
export const waitBeforeDispatch = (log: DispatchLog, now: number): number => {
  if (log.recent.length < log.perSecond) return 0
  const oldest = log.recent[log.recent.length - log.perSecond]!
  return Math.max(0, oldest + WINDOW_MS - now)
}

/** The log after a dispatch at `now`. */
export const recordDispatch = (log: DispatchLog, now: number): DispatchLog => ({
  perSecond: log.perSecond,
  recent: [...log.recent, now].slice(-log.perSecond)
})

/** A log rebuilt from dispatch times found in the database, e.g. after taking over a campaign. */
export const logFrom = (perSecond: number, times: ReadonlyArray<number>): DispatchLog => ({
  perSecond,
  recent: [...times].sort((a, b) => a - b).slice(-perSecond)
})
