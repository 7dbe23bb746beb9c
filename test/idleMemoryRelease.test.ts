import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Layer, Option, Ref, TestClock } from "effect"
import {
  glibcMallocTrim,
  IDLE_WINDOW_MS,
  IdleMemoryReleaseLive,
  makeIdleMemoryRelease
} from "../layers/memory/idleMemoryRelease.ts"
import { afterIdleWindow, atStart, idleReleaseLimits } from "../src/memory/idleRelease.ts"

/** Whether memory is given back after each window of the given utilizations, from the start. */
const replay = (utilizations: ReadonlyArray<number>) => {
  let state = atStart
  return utilizations.map((busy) => {
    const after = afterIdleWindow(state, busy, idleReleaseLimits)
    state = after.state
    return after.release
  })
}

describe("giving freed memory back while the server is quiet", () => {
  it("gives it back once the start is followed by three quiet windows, and not again while nothing happens", () => {
    expect(replay([0.3, 0.01, 0.02, 0.01, 0, 0, 0, 0])).toEqual([false, false, false, true, false, false, false, false])
  })

  it("gives it back again only after a busy spell, and a busy window starts the quiet count over", () => {
    expect(replay([0, 0, 0, 0.5, 0, 0.2, 0, 0, 0, 0])).toEqual([
      false,
      false,
      true,
      false,
      false,
      false,
      false,
      false,
      true,
      false
    ])
  })

  it.effect("the server's fiber gives memory back on its windows, driven by the clock", () =>
    Effect.scoped(Effect.gen(function*() {
      const busy = yield* Ref.make(0.6)
      const released = yield* Ref.make(0)
      yield* makeIdleMemoryRelease(Ref.get(busy), Ref.update(released, (count) => count + 1))
      yield* TestClock.adjust(IDLE_WINDOW_MS * 2)
      expect(yield* Ref.get(released)).toBe(0)
      yield* Ref.set(busy, 0.01)
      yield* TestClock.adjust(IDLE_WINDOW_MS * 2)
      expect(yield* Ref.get(released)).toBe(0)
      yield* TestClock.adjust(IDLE_WINDOW_MS)
      expect(yield* Ref.get(released)).toBe(1)
      yield* TestClock.adjust(IDLE_WINDOW_MS * 10)
      expect(yield* Ref.get(released)).toBe(1)
    })))

  it.effect.skipIf(process.platform !== "linux")(
    "finds glibc's malloc_trim on Linux and calls it",
    () =>
      Effect.gen(function*() {
        const trim = yield* glibcMallocTrim
        expect(Option.isSome(trim)).toBe(true)
        // malloc_trim answers 1 when it gave memory back, 0 when there was none to give.
        expect([0, 1]).toContain(yield* Option.getOrThrow(trim))
      })
  )

  it.effect("a TALKGRAPH_RELEASE_IDLE_MEMORY that is not a boolean stops the start, naming the variable", () =>
    Effect.gen(function*() {
      const built = yield* Layer.build(IdleMemoryReleaseLive).pipe(
        Effect.scoped,
        Effect.withConfigProvider(ConfigProvider.fromMap(new Map([["TALKGRAPH_RELEASE_IDLE_MEMORY", "sometimes"]]))),
        Effect.either
      )
      expect(Either.isLeft(built)).toBe(true)
      expect(String(Either.isLeft(built) && built.left)).toContain("TALKGRAPH_RELEASE_IDLE_MEMORY")
    }))
})
