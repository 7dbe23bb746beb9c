import { Clock, Effect, Fiber } from "effect"
import { describe, expect, it } from "vitest"
import { makeSimulationClock } from "../layers/agentTests/simulationClock.ts"

const realMs = () => performance.now()

describe("the simulation clock of voice-mode agent tests", () => {
  it("runs sleeps and time `speed` times as fast as the wall clock", async () => {
    const simulation = makeSimulationClock(10)
    const started = realMs()
    const elapsed = await Effect.runPromise(
      Effect.gen(function*() {
        const before = yield* Clock.currentTimeMillis
        yield* Effect.sleep("2 seconds")
        return (yield* Clock.currentTimeMillis) - before
      }).pipe(Effect.withClock(simulation.clock))
    )
    const took = realMs() - started
    expect(elapsed).toBeGreaterThanOrEqual(2000)
    // Two simulated seconds at ten times: about 200 ms, far from the 2 s of real time.
    expect(took).toBeGreaterThanOrEqual(190)
    expect(took).toBeLessThan(1500)
  })

  it("stops time while paused: no sleeper wakes and no time passes until it resumes", async () => {
    const simulation = makeSimulationClock(5)
    const woke: Array<number> = []
    await Effect.runPromise(
      Effect.gen(function*() {
        const sleeper = yield* Effect.sleep("500 millis").pipe(
          Effect.zipRight(Effect.sync(() => woke.push(simulation.elapsedMs()))),
          Effect.fork
        )
        yield* simulation.pause
        const frozenAt = simulation.elapsedMs()
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 300)))
        expect(simulation.elapsedMs()).toBe(frozenAt)
        expect(woke).toEqual([])
        yield* simulation.resume
        yield* Fiber.join(sleeper)
      }).pipe(Effect.withClock(simulation.clock))
    )
    expect(woke).toHaveLength(1)
    expect(woke[0]).toBeGreaterThanOrEqual(500)
  })

  it("lets an interrupted sleep go without waking anything later", async () => {
    const simulation = makeSimulationClock(20)
    const result = await Effect.runPromise(
      Effect.sleep("10 seconds").pipe(
        Effect.as("slept"),
        Effect.timeout("100 millis"),
        Effect.option,
        Effect.withClock(simulation.clock)
      )
    )
    expect(result._tag).toBe("None")
  })
})
