import { describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Either, Fiber, Layer, Option, Ref, TestClock } from "effect"
import { spawn } from "node:child_process"
import { once } from "node:events"
import * as fs from "node:fs"
import * as os from "node:os"
import * as path from "node:path"
import { makeLoopSaturationGate, SATURATION_WINDOW_MS } from "../layers/campaigns/scheduler/loopSaturationGate.ts"
import { SchedulerSettings, SchedulerSettingsLive } from "../layers/campaigns/scheduler/schedulerSettings.ts"
import { afterWindow, notSaturated, saturationLimits } from "../src/campaigns/loopSaturation.ts"
import { busyShare } from "../src/memory/loopBusyShare.ts"

/**
 * Prints node's own utilization of an idle loop and what talkgraph's reader makes of it. The loop
 * settles first and is then read over 1.5 s: what the process does right after loading the modules
 * is not the idle loop's work, and one 600 ms window read straight after the imports came to 0.21
 * on a loaded CI run (0.09–0.17 under three busy cores here; 0.09–0.14 this way).
 */
const IDLE_READER = `
const { Effect } = await import("effect")
const { eventLoopUtilization } = await import(${
  JSON.stringify(path.resolve(import.meta.dirname, "../layers/eventLoopUtilization.ts"))
})
await new Promise((resolve) => setTimeout(resolve, 300))
const read = Effect.runSync(eventLoopUtilization)
const before = performance.eventLoopUtilization()
await new Promise((resolve) => setTimeout(resolve, 1500))
const loop = performance.eventLoopUtilization(before).utilization
console.log(JSON.stringify({ loop, busy: Effect.runSync(read) }))
`

const limits = saturationLimits(0.95)

/** Whether claims are held after each window of the given utilizations. */
const replay = (utilizations: ReadonlyArray<number>) => {
  let state = notSaturated
  return utilizations.map((busy) => (state = afterWindow(state, busy, limits)).holding)
}

describe("holding new calls while the event loop is saturated", () => {
  it("holds after two saturated windows in a row, not after one burst", () => {
    expect(replay([0.99, 0.5, 0.99, 0.6])).toEqual([false, false, false, false])
    expect(replay([0.96, 1, 0.97])).toEqual([false, true, true])
  })

  it("ends the hold only once a window falls clearly under the threshold", () => {
    // 0.9 is under 0.95 but not under 0.85: the process has not caught up yet.
    expect(replay([1, 1, 0.9, 0.88, 0.8, 0.96])).toEqual([false, true, true, true, false, false])
  })

  it.effect("a claim waits while the hold is on and goes on when the loop has caught up", () =>
    Effect.scoped(Effect.gen(function*() {
      const busy = yield* Ref.make(0.2)
      const gate = yield* makeLoopSaturationGate(Ref.get(busy), limits)
      const window = () => TestClock.adjust(SATURATION_WINDOW_MS)

      // Not saturated: a claim does not wait.
      yield* window()
      const free = yield* Effect.fork(gate.awaitHeadroom)
      yield* Effect.yieldNow()
      expect(Option.isSome(yield* Fiber.poll(free))).toBe(true)

      yield* Ref.set(busy, 1)
      yield* window()
      yield* window()
      expect(yield* gate.isHolding).toBe(true)
      const held = yield* Effect.fork(gate.awaitHeadroom)
      yield* Effect.yieldNow()
      yield* Ref.set(busy, 0.9)
      yield* window()
      expect(Option.isSome(yield* Fiber.poll(held))).toBe(false)

      yield* Ref.set(busy, 0.4)
      yield* window()
      yield* Fiber.join(held)
      expect(yield* gate.isHolding).toBe(false)
    })))

  it.effect("is set with TALKGRAPH_DISPATCH_HOLD_LOOP_PERCENT: 95 by default, 0 turns it off, 101 is refused by name", () =>
    Effect.gen(function*() {
      const read = (env: Record<string, string>) =>
        Effect.either(
          Effect.map(SchedulerSettings, (settings) => settings.holdLoopPercent).pipe(
            Effect.provide(
              SchedulerSettingsLive.pipe(
                Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
              )
            )
          )
        )
      expect(yield* read({})).toEqual(Either.right(95))
      expect(yield* read({ TALKGRAPH_DISPATCH_HOLD_LOOP_PERCENT: "0" })).toEqual(Either.right(0))
      const refused = yield* read({ TALKGRAPH_DISPATCH_HOLD_LOOP_PERCENT: "101" })
      expect(Either.isLeft(refused) && String(refused.left)).toContain("TALKGRAPH_DISPATCH_HOLD_LOOP_PERCENT")
    }))
})

describe("how busy the event loop was", () => {
  it("believes the loop's utilization when the process used at least half a core", () => {
    expect(busyShare(0.98, 0.9)).toBe(0.98)
    expect(busyShare(0.97, 0.5)).toBe(0.97)
    expect(busyShare(0.3, 1.6)).toBe(0.3)
  })

  it("caps it by the CPU used under half a core, as when a profiler makes an idle loop read busy", () => {
    expect(busyShare(0.94, 0.02)).toBe(0.02)
    expect(busyShare(0.1, 0.3)).toBe(0.1)
  })

  it.live("reads an idle process as idle under V8's CPU profiler", () =>
    Effect.gen(function*() {
      const profiles = fs.mkdtempSync(path.join(os.tmpdir(), "talkgraph-profile-"))
      const child = spawn(
        process.execPath,
        ["--cpu-prof", `--cpu-prof-dir=${profiles}`, "--import", "tsx", "--input-type=module", "-e", IDLE_READER],
        { stdio: ["ignore", "pipe", "inherit"] }
      )
      const [line] = yield* Effect.promise(() => once(child.stdout!, "data")).pipe(
        Effect.ensuring(Effect.promise(() => once(child, "exit"))),
        Effect.ensuring(Effect.sync(() => fs.rmSync(profiles, { recursive: true, force: true })))
      )
      const { loop, busy } = JSON.parse(String(line)) as { loop: number; busy: number }
      // node's own figure says busy; what the dialer and the memory release read says idle.
      expect(loop).toBeGreaterThan(0.5)
      expect(busy).toBeLessThan(0.2)
    }), 30_000)
})
