import { Effect, Option, Queue, type Scope } from "effect"
import type { CallInput } from "./callSession.ts"

/** Frames a slow call may fall behind by (10 s of 20 ms frames) before newer caller audio is dropped. */
export const INBOUND_BACKLOG = 500

/**
 * What a call's socket has received and its session not yet taken. When the session falls behind,
 * newer caller audio is dropped, counted and logged; marks, hang-ups and the rest never are (a lost
 * mark would leave a reply unfinished, a lost stop would leave the call open).
 */
export const makeInboundBacklog = (
  runId: number,
  limit = INBOUND_BACKLOG
): Effect.Effect<
  {
    readonly queue: Queue.Dequeue<CallInput>
    readonly offer: (media: CallInput) => Effect.Effect<void>
    /**
     * `offer` done at once, for a socket's message callback: a callback that returns no effect
     * starts no fiber, where one per 20 ms frame was a good part of a call's CPU. Answers the
     * warning to log when this is the first frame dropped.
     */
    readonly offerNow: (media: CallInput) => Effect.Effect<void> | undefined
    readonly dropped: () => number
  },
  never,
  Scope.Scope
> =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<CallInput>()
    let dropped = 0
    yield* Effect.addFinalizer(() =>
      dropped === 0
        ? Effect.void
        : Effect.logWarning("Caller audio was dropped during a call", { run_id: runId, dropped_frames: dropped })
    )
    const offerNow = (media: CallInput) => {
      if (media._tag !== "Audio" || Option.getOrElse(queue.unsafeSize(), () => 0) < limit) {
        queue.unsafeOffer(media)
        return undefined
      }
      dropped++
      return dropped === 1
        ? Effect.logWarning("A call is falling behind its caller's audio; audio is being dropped", { run_id: runId })
        : undefined
    }
    const offer = (media: CallInput) => Effect.suspend(() => offerNow(media) ?? Effect.void)
    return { queue, offer, offerNow, dropped: () => dropped }
  })
