import { Clock, Duration, Effect } from "effect"

/** A `Clock` whose time runs `speed` times as fast as the wall clock, and stops while paused. */
export interface SimulationClock {
  readonly clock: Clock.Clock
  /** Stops time: nothing on this clock wakes until `resume`. Idempotent. */
  readonly pause: Effect.Effect<void>
  readonly resume: Effect.Effect<void>
  /** Simulated milliseconds since the clock was made. */
  readonly elapsedMs: () => number
}

interface Sleeper {
  readonly due: number
  readonly wake: () => void
}

/**
 * The clock a simulated voice call runs on. Everything in a call (audio pacing, endpointing,
 * timeouts, the caller's pauses) reads time from the fiber's `Clock`, so running the call's
 * fibers on this one makes the whole call faster than real time with its timing intact. Pausing
 * freezes the call while the simulated caller's own models think: a person's reply time is then
 * the caller's fixed reaction time, not whatever its LLM took.
 */
export const makeSimulationClock = (speed: number): SimulationClock => {
  const origin = Date.now()
  /** Simulated ms at `anchor`, and the wall-clock ms of the anchor. */
  let simulated = 0
  let anchor = performance.now()
  let paused = false
  let timer: ReturnType<typeof setTimeout> | undefined
  const sleepers = new Set<Sleeper>()

  const elapsedMs = () => paused ? simulated : simulated + (performance.now() - anchor) * speed

  const arm = () => {
    if (timer !== undefined) clearTimeout(timer)
    timer = undefined
    if (paused || sleepers.size === 0) return
    let next = Infinity
    for (const sleeper of sleepers) next = Math.min(next, sleeper.due)
    timer = setTimeout(fire, Math.max(0, (next - elapsedMs()) / speed))
  }

  const fire = () => {
    timer = undefined
    const now = elapsedMs()
    for (const sleeper of [...sleepers]) {
      if (sleeper.due <= now) {
        sleepers.delete(sleeper)
        sleeper.wake()
      }
    }
    arm()
  }

  const unsafeCurrentTimeMillis = () => origin + elapsedMs()

  const clock: Clock.Clock = {
    [Clock.ClockTypeId]: Clock.ClockTypeId,
    unsafeCurrentTimeMillis,
    currentTimeMillis: Effect.sync(unsafeCurrentTimeMillis),
    unsafeCurrentTimeNanos: () => BigInt(Math.round(unsafeCurrentTimeMillis() * 1_000_000)),
    currentTimeNanos: Effect.sync(() => BigInt(Math.round(unsafeCurrentTimeMillis() * 1_000_000))),
    sleep: (duration) =>
      Effect.async<void>((resume) => {
        const sleeper: Sleeper = { due: elapsedMs() + Duration.toMillis(duration), wake: () => resume(Effect.void) }
        sleepers.add(sleeper)
        arm()
        return Effect.sync(() => {
          sleepers.delete(sleeper)
          arm()
        })
      })
  }

  const pause = Effect.sync(() => {
    if (paused) return
    simulated = elapsedMs()
    paused = true
    arm()
  })
  const resume = Effect.sync(() => {
    if (!paused) return
    anchor = performance.now()
    paused = false
    arm()
  })

  return { clock, pause, resume, elapsedMs }
}
