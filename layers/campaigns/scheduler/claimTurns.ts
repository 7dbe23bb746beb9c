import { Deferred, Effect } from "effect"

/**
 * One claim at a time per organization in this process, in the order they asked. Claims of an
 * organization queue on its database lock anyway; waiting here instead keeps the others from each
 * holding a pooled connection while they wait, which would starve callbacks and every other query
 * of the process. First come, first served: with Effect's semaphore a campaign that releases and
 * asks again at once goes first, and the organization's other campaigns wait indefinitely.
 */
export const makeClaimTurns = () => {
  /** Per organization, the claims waiting; the first holds the turn. */
  const queues = new Map<number, Array<Deferred.Deferred<void>>>()

  /**
   * Waits for the organization's turn (interruptibly: an interrupted wait leaves the queue) and
   * returns what gives it back.
   */
  const take = (organizationId: number) =>
    Effect.uninterruptibleMask((restore) =>
      Effect.gen(function*() {
        const mine = yield* Deferred.make<void>()
        const queue = queues.get(organizationId) ?? []
        queues.set(organizationId, queue)
        queue.push(mine)
        if (queue.length === 1) yield* Deferred.succeed(mine, undefined)
        const leave = Effect.suspend(() => {
          const position = queue.indexOf(mine)
          if (position < 0) return Effect.void
          queue.splice(position, 1)
          if (queue.length === 0) queues.delete(organizationId)
          return position === 0 && queue.length > 0 ? Deferred.succeed(queue[0]!, undefined) : Effect.void
        })
        yield* restore(Deferred.await(mine)).pipe(Effect.onInterrupt(() => leave))
        return Effect.asVoid(leave)
      })
    )

  return { take }
}

export type ClaimTurns = ReturnType<typeof makeClaimTurns>
