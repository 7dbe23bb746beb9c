import { Effect } from "effect"

/**
 * Runs at most `permits` effects at once and lets at most `maxWaiting` more wait their turn;
 * beyond that an effect fails at once with its `busy` error instead of queueing without bound.
 */
export const makeBoundedGate = (permits: number, maxWaiting: number) =>
  Effect.map(Effect.makeSemaphore(permits), (semaphore) => {
    let admitted = 0
    return <A, E, R, B>(effect: Effect.Effect<A, E, R>, busy: B): Effect.Effect<A, E | B, R> =>
      Effect.suspend((): Effect.Effect<A, E | B, R> => {
        if (admitted >= permits + maxWaiting) return Effect.fail(busy)
        admitted++
        return semaphore.withPermits(1)(effect).pipe(Effect.ensuring(Effect.sync(() => admitted--)))
      })
  })
