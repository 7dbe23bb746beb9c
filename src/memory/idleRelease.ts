/**
 * When a process should give the memory it freed back to the operating system. The C allocator
 * keeps what compiling code and building buffers freed inside its arenas, scattered between pages
 * still in use, so a server that was busy once holds that memory for good; handing it back costs a
 * walk over the arenas, which is cheap while the process is quiet and a stall while it is busy.
 * So memory is given back once the event loop has been quiet for `idleWindows` windows in a row,
 * and only once after each busy spell: a quiet server is not walked again and again for nothing.
 * The start counts as a busy spell (it compiles most of the code the server will ever run).
 */
export interface IdleReleaseLimits {
  /** Event-loop utilization (0–1) under which a window counts as quiet. */
  readonly quietBelow: number
  /** Quiet windows in a row after which memory is given back. */
  readonly quietWindows: number
}

export interface IdleReleaseState {
  /** Whether a window has been busy since memory was last given back. */
  readonly busySinceRelease: boolean
  /** Quiet windows in a row so far. */
  readonly quiet: number
}

export const idleReleaseLimits: IdleReleaseLimits = { quietBelow: 0.05, quietWindows: 3 }

export const atStart: IdleReleaseState = { busySinceRelease: true, quiet: 0 }

/** The state after one more window whose event loop was busy `utilization` of the time, and whether to give memory back now. */
export const afterIdleWindow = (
  state: IdleReleaseState,
  utilization: number,
  limits: IdleReleaseLimits
): { readonly state: IdleReleaseState; readonly release: boolean } => {
  if (utilization >= limits.quietBelow) return { state: { busySinceRelease: true, quiet: 0 }, release: false }
  const quiet = state.quiet + 1
  const release = state.busySinceRelease && quiet >= limits.quietWindows
  return { state: { busySinceRelease: state.busySinceRelease && !release, quiet }, release }
}
