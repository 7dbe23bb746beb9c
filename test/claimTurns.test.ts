import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber } from "effect"
import { makeClaimTurns } from "../layers/campaigns/scheduler/claimTurns.ts"

describe("claim turns of an organization", () => {
  it.effect("go first come, first served: one that gives its turn back and asks again queues behind the others", () =>
    Effect.gen(function*() {
      const turns = makeClaimTurns()
      const order: Array<string> = []
      /** Claims `times` times in a row, as a campaign actor does, giving the turn back in between. */
      const claimer = (name: string, times: number) =>
        Effect.gen(function*() {
          for (let claim = 0; claim < times; claim++) {
            const giveBack = yield* turns.take(1)
            order.push(name)
            yield* Effect.yieldNow()
            yield* giveBack
          }
        })
      yield* Effect.all([claimer("a", 3), claimer("b", 3), claimer("c", 3)], { concurrency: "unbounded" })
      expect(order).toEqual(["a", "b", "c", "a", "b", "c", "a", "b", "c"])
    }))

  it.effect("are separate per organization", () =>
    Effect.gen(function*() {
      const turns = makeClaimTurns()
      yield* turns.take(1)
      const other = yield* turns.take(2)
      yield* other
    }))

  it.effect("leave no trace of a wait that was interrupted: the turn passes to the next in line", () =>
    Effect.gen(function*() {
      const turns = makeClaimTurns()
      const first = yield* turns.take(1)
      const interrupted = yield* Effect.fork(turns.take(1))
      const next = yield* Effect.fork(turns.take(1))
      yield* Effect.yieldNow()
      yield* Fiber.interrupt(interrupted)
      yield* first
      const giveBack = yield* Fiber.join(next)
      yield* giveBack
      // Free again: a new claim gets the turn at once.
      yield* yield* turns.take(1)
    }))
})
