/**
 * When a process should stop claiming new calls for a while. Every call it places comes back as
 * requests it must answer in time (the answer document while the callee waits in silence, status
 * callbacks the carrier gives up on); a process whose event loop is already busy all the time can
 * only answer them later and later if it keeps placing more. Claims wait while the loop has been
 * saturated for `busyWindows` windows in a row, and go on once a window falls under `resumeBelow`,
 * so a moment's burst (a garbage collection, one heavy request) holds nothing.
 */
export interface SaturationLimits {
  /** Event-loop utilization (0–1) from which a window counts as saturated. */
  readonly holdFrom: number
  /** Utilization under which a window ends a hold. */
  readonly resumeBelow: number
  /** Saturated windows in a row that start a hold. */
  readonly busyWindows: number
}

export interface SaturationState {
  readonly holding: boolean
  /** Saturated windows in a row so far. */
  readonly busy: number
}

export const notSaturated: SaturationState = { holding: false, busy: 0 }

export const saturationLimits = (holdFrom: number): SaturationLimits => ({
  holdFrom,
  resumeBelow: holdFrom - 0.1,
  busyWindows: 2
})

/** The state after one more window whose event loop was busy `utilization` of the time. */
export const afterWindow = (state: SaturationState, utilization: number, limits: SaturationLimits): SaturationState => {
  const busy = utilization >= limits.holdFrom ? state.busy + 1 : 0
  if (state.holding) return { holding: utilization >= limits.resumeBelow, busy }
  return { holding: busy >= limits.busyWindows, busy }
}
