import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import { makePasswordHashing } from "../layers/identity/passwordHashing.ts"
import { passwordHashingConcurrency } from "../src/identity/passwords.ts"

/**
 * A stand-in for argon2 that records how many hashes run at once. Like the real one (a libuv
 * thread behind a promise), a hash that has started keeps its thread busy until it ends, even
 * when whoever waited for it goes away.
 */
const instrumentedArgon2 = () => {
  let running = 0
  let peak = 0
  let finished = 0
  const work = <A>(value: A) =>
    Effect.uninterruptible(Effect.gen(function*() {
      const done = yield* Deferred.make<A>()
      running++
      peak = Math.max(peak, running)
      const thread = Effect.sleep("10 millis").pipe(
        Effect.zipRight(Effect.sync(() => {
          running--
          finished++
        })),
        Effect.zipRight(Deferred.succeed(done, value))
      )
      yield* Effect.forkDaemon(thread)
      return done
    })).pipe(Effect.flatMap(Deferred.await))
  return {
    argon2: { hash: (password: string) => work(`hash:${password}`), verify: () => work(false) },
    stats: () => ({ running, peak, finished })
  }
}

/** Lets every forked fiber run until it blocks. */
const settle = Effect.repeatN(Effect.yieldNow(), 20)

describe("password hashing", () => {
  it("uses half the cores, at least one and at most three", () => {
    expect([1, 2, 3, 4, 8, 64].map(passwordHashingConcurrency)).toEqual([1, 1, 1, 2, 3, 3])
  })

  it.effect("runs no more checks at once than it has permits, however many are asked for", () =>
    Effect.gen(function*() {
      const { argon2, stats } = instrumentedArgon2()
      const hashing = yield* makePasswordHashing(2, argon2)
      const all = yield* Effect.fork(
        Effect.all(Array.from({ length: 40 }, () => hashing.verify("h", "p")), { concurrency: "unbounded" })
      )
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(all)).toHaveLength(40)
      expect(stats().peak).toBe(2)
    }))

  it.effect("tells callers to retry once too many are waiting, and serves them again when the queue drains", () =>
    Effect.gen(function*() {
      const { argon2 } = instrumentedArgon2()
      const hashing = yield* makePasswordHashing(1, argon2, 3)
      const waiting = yield* Effect.fork(
        Effect.all(Array.from({ length: 4 }, () => hashing.verify("h", "p")), { concurrency: "unbounded" })
      )
      yield* settle
      const refused = yield* Effect.flip(hashing.verify("h", "p"))
      expect(refused).toMatchObject({ _tag: "TooManyRequests", retryAfterSeconds: 1 })
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(waiting)
      const later = yield* Effect.fork(hashing.hash("again"))
      yield* TestClock.adjust("1 second")
      expect(yield* Fiber.join(later)).toBe("hash:again")
    }))

  it.effect("keeps a check's permit until the check ends, even when its caller goes away", () =>
    Effect.gen(function*() {
      const { argon2, stats } = instrumentedArgon2()
      const hashing = yield* makePasswordHashing(1, argon2)
      const started = yield* Deferred.make<void>()
      const abandoned = yield* Effect.fork(
        Effect.zipRight(Deferred.succeed(started, undefined), hashing.verify("h", "p"))
      )
      yield* Deferred.await(started)
      yield* settle
      const interrupting = yield* Effect.fork(Fiber.interrupt(abandoned))
      const next = yield* Effect.fork(hashing.verify("h", "p"))
      yield* settle
      expect(stats().running).toBe(1)
      yield* TestClock.adjust("1 second")
      yield* Fiber.join(interrupting)
      yield* Fiber.join(next)
      expect(stats()).toMatchObject({ peak: 1, finished: 2 })
    }))
})
