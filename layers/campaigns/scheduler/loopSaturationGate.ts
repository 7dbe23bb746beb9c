import { Effect, Stream, SubscriptionRef } from "effect"
import {
  afterWindow,
  notSaturated,
  type SaturationLimits,
  type SaturationState
} from "../../../src/campaigns/loopSaturation.ts"

/** How often the event loop's utilization is read; a hold starts after two saturated windows. */
export const SATURATION_WINDOW_MS = 500

/**
 * Holds the process's new claims while its event loop is saturated (see `afterWindow`), so the
 * requests of calls already placed are answered first. Samples `utilization` every window in a
 * fiber of the enclosing scope, sleeping on the caller's Clock, so tests drive it with TestClock.
 */
export const makeLoopSaturationGate = (utilization: Effect.Effect<number>, limits: SaturationLimits) =>
  Effect.gen(function*() {
    const state = yield* SubscriptionRef.make<SaturationState>(notSaturated)
    const sample = Effect.gen(function*() {
      const busy = yield* utilization
      const before = yield* SubscriptionRef.get(state)
      const after = afterWindow(before, busy, limits)
      yield* SubscriptionRef.set(state, after)
      if (after.holding === before.holding) return
      if (after.holding) {
        yield* Effect.logWarning("event loop saturated: new calls wait until this process catches up", {
          utilization: Math.round(busy * 100) / 100
        })
      } else {
        yield* Effect.logInfo("event loop no longer saturated: placing calls again")
      }
    })
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Effect.sleep(SATURATION_WINDOW_MS), sample)).pipe(Effect.interruptible)
    )

    const isHolding = Effect.map(SubscriptionRef.get(state), (current) => current.holding)
    /** Returns at once unless a hold is on, then when it ends. */
    const awaitHeadroom = Effect.flatMap(isHolding, (held) =>
      held
        ? state.changes.pipe(Stream.filter((current) => !current.holding), Stream.take(1), Stream.runDrain)
        : Effect.void)
    return { awaitHeadroom, isHolding }
  })
