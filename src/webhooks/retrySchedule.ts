/**
 * When a failed delivery is tried again: exponential backoff from `baseMs`, doubling per attempt
 * and capped at `capMs`, for as long as its retry window (24 hours from the event) lasts. After the
 * window the delivery has failed for good.
 */
export interface RetrySettings {
  readonly baseMs: number
  readonly capMs: number
}

export const retryDefaults: RetrySettings = { baseMs: 5_000, capMs: 60 * 60 * 1000 }

export type RetryDecision =
  | { readonly _tag: "Retry"; readonly at: number }
  | { readonly _tag: "GiveUp" }

/** After the `attempts`-th failed attempt (1 = the first), at `now`. */
export const afterFailure = (
  settings: RetrySettings,
  attempts: number,
  now: number,
  retryUntil: number
): RetryDecision => {
  const delay = Math.min(settings.capMs, settings.baseMs * 2 ** Math.max(0, Math.min(attempts - 1, 30)))
  const at = now + delay
  // The last try is made at the end of the window rather than skipped because the delay overshoots it.
  if (now >= retryUntil) return { _tag: "GiveUp" }
  return { _tag: "Retry", at: Math.min(at, retryUntil) }
}

/** An endpoint that has failed every delivery for this long is disabled (and says so). */
export const ENDPOINT_FAILING_LIMIT_MS = 24 * 60 * 60 * 1000

export const shouldDisable = (failingSince: number | null, now: number): boolean =>
  failingSince !== null && now - failingSince >= ENDPOINT_FAILING_LIMIT_MS
