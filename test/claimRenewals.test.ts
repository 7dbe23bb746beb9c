import { describe, expect, it } from "@effect/vitest"
import { Clock, Deferred, Effect, Fiber, TestClock } from "effect"
import { LEASE_SECONDS } from "../layers/conversation/chatRunRows.ts"
import { makeClaimRenewals } from "../layers/conversation/claimRenewals.ts"

describe("chat claim renewals", () => {
  it.scoped("renew a claim held through a long reply before its lease runs out, and stop once it is let go", () =>
    Effect.gen(function*() {
      const renewedAt: Array<number> = []
      const renewals = yield* makeClaimRenewals((runId, token) =>
        Effect.map(Clock.currentTimeMillis, (now) => {
          expect([runId, token]).toEqual([7, "token-a"])
          renewedAt.push(now)
        })
      )
      const done = yield* Deferred.make<void>()
      const reply = yield* Effect.fork(renewals.hold(7, "token-a", Deferred.await(done)))
      yield* TestClock.adjust("1 seconds")
      expect(renewedAt).toEqual([])
      yield* TestClock.adjust(`${LEASE_SECONDS * 2} seconds`)
      // Renewed often enough that the claim never went a whole lease without it.
      const gaps = [0, ...renewedAt].map((at, index, all) => (index === 0 ? at : at - all[index - 1]!))
      expect(renewedAt.length).toBeGreaterThanOrEqual(3)
      expect(Math.max(...gaps)).toBeLessThan(LEASE_SECONDS * 1000)
      yield* Deferred.succeed(done, undefined)
      yield* Fiber.join(reply)
      const count = renewedAt.length
      yield* TestClock.adjust(`${LEASE_SECONDS * 2} seconds`)
      expect(renewedAt).toHaveLength(count)
    }))

  it.scoped("leave a reply that ends quickly alone", () =>
    Effect.gen(function*() {
      let renewed = 0
      const renewals = yield* makeClaimRenewals(() => Effect.sync(() => renewed++))
      yield* renewals.hold(1, "quick", TestClock.adjust("2 seconds"))
      yield* TestClock.adjust(`${LEASE_SECONDS * 3} seconds`)
      expect(renewed).toBe(0)
    }))
})
