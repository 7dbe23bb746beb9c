import { describe, expect, it } from "@effect/vitest"
import { Effect, Fiber, Option } from "effect"
import { makeClaimTurns } from "../layers/campaigns/scheduler/claimTurns.ts"

/** Lets forked claims run as far as they can without waiting for a turn. */
const letOthersRun = Effect.repeatN(Effect.yieldNow(), 10)

/** Whether a forked claim has been given its turn (it is done) rather than still waiting. */
const hasTurn = <A>(claim: Fiber.Fiber<A>) => Effect.map(Fiber.poll(claim), Option.isSome)

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

  it.effect("are separate per organization: another organization's claim goes ahead while one holds its turn", () =>
    Effect.gen(function*() {
      const turns = makeClaimTurns()
      const giveBackA = yield* turns.take(1)
      const secondOfA = yield* Effect.fork(turns.take(1))
      const firstOfB = yield* Effect.fork(turns.take(2))
      yield* letOthersRun
      expect(yield* hasTurn(firstOfB)).toBe(true)
      expect(yield* hasTurn(secondOfA)).toBe(false)
      yield* giveBackA
      yield* letOthersRun
      expect(yield* hasTurn(secondOfA)).toBe(true)
    }))

  it.effect("leave no trace of a wait that was interrupted: the turn passes to the next in line, in order", () =>
    Effect.gen(function*() {
      const turns = makeClaimTurns()
      const giveBackFirst = yield* turns.take(1)
      const interrupted = yield* Effect.fork(turns.take(1))
      const second = yield* Effect.fork(turns.take(1))
      const third = yield* Effect.fork(turns.take(1))
      yield* letOthersRun
      yield* Fiber.interrupt(interrupted)
      expect([yield* hasTurn(second), yield* hasTurn(third)]).toEqual([false, false])
      yield* giveBackFirst
      yield* letOthersRun
      expect([yield* hasTurn(second), yield* hasTurn(third)]).toEqual([true, false])
      yield* yield* Fiber.join(second)
      yield* letOthersRun
      expect(yield* hasTurn(third)).toBe(true)
      yield* yield* Fiber.join(third)
      // Free again: a new claim gets the turn at once.
      const fresh = yield* Effect.fork(turns.take(1))
      yield* letOthersRun
      expect(yield* hasTurn(fresh)).toBe(true)
    }))
})
