import { Chunk, Effect, Queue } from "effect"
import type { DialerRepoShape } from "../../../services/DialerRepo.ts"
import type { AttemptRef, AttemptRefs } from "./attemptRefs.ts"

interface PlacedCall {
  readonly attemptId: number
  readonly providerCallId: string
  readonly runId: number
  readonly attempt: AttemptRef
}

/** More in one statement only makes it longer to wait for. */
const MAX_BATCH = 500

/**
 * Writes the carrier's call ids of placed attempts (what reconciliation asks the carrier about).
 * At hundreds of calls a second a statement per call costs a database round trip each, so each
 * write takes whatever accumulated while the previous one was under way; a call placed alone is
 * written at once. On shutdown the writer finishes its write and the rest is written before the
 * scope closes. The calls written are remembered for their callbacks to this process.
 */
export const makePlacedCalls = (repo: DialerRepoShape, refs: AttemptRefs["Type"]) =>
  Effect.gen(function*() {
    const queue = yield* Queue.unbounded<PlacedCall>()
    const write = (placed: ReadonlyArray<PlacedCall>) =>
      placed.length === 0
        ? Effect.void
        : repo.recordPlaced(placed).pipe(
          Effect.tap((foreign) => {
            const refused = new Set<number | null>(foreign.map((attempt) => attempt.run_id))
            return Effect.forEach(
              placed.filter((call) => !refused.has(call.runId)),
              (call) => refs.placed(call.runId, call.attempt, call.providerCallId),
              { discard: true }
            )
          }),
          Effect.flatMap((foreign) =>
            Effect.forEach(foreign, (attempt) =>
              Effect.logWarning(
                "a signed callback tied this run to another call than the one placed; the placed call is refused",
                {
                  run_id: attempt.run_id
                }
              ), { discard: true })
          ),
          Effect.catchAllCause((cause) =>
            Effect.logError("recording placed calls failed", { calls: placed.length }, cause)
          )
        )
    yield* Effect.addFinalizer(() => Effect.flatMap(Queue.takeAll(queue), (rest) => write(Chunk.toReadonlyArray(rest))))
    yield* Effect.uninterruptibleMask((restore) =>
      restore(Queue.takeBetween(queue, 1, MAX_BATCH)).pipe(
        Effect.flatMap((batch) => write(Chunk.toReadonlyArray(batch)))
      )
    ).pipe(Effect.forever, Effect.forkScoped)
    return {
      /** Before the carrier is asked: this process then answers the attempt's callbacks without a read. */
      dialing: refs.dialing,
      record: (call: PlacedCall) => Queue.offer(queue, call).pipe(Effect.asVoid)
    }
  })

export type PlacedCalls = Effect.Effect.Success<ReturnType<typeof makePlacedCalls>>
