import { Config, Effect, Layer, Option, Ref } from "effect"
import { afterIdleWindow, atStart, type IdleReleaseLimits, idleReleaseLimits } from "../../src/memory/idleRelease.ts"
import { eventLoopUtilization } from "../eventLoopUtilization.ts"

/** How often the event loop's utilization is read; memory goes back after three quiet windows. */
export const IDLE_WINDOW_MS = 2000

/**
 * Gives memory back (`release`) whenever `afterIdleWindow` says so, sampling `utilization` every
 * window in a fiber of the enclosing scope, sleeping on the caller's Clock so tests drive it with
 * TestClock.
 */
export const makeIdleMemoryRelease = (
  utilization: Effect.Effect<number>,
  release: Effect.Effect<void>,
  limits: IdleReleaseLimits = idleReleaseLimits
) =>
  Effect.gen(function*() {
    const state = yield* Ref.make(atStart)
    const sample = Effect.flatMap(utilization, (busy) =>
      Effect.flatMap(
        Ref.modify(state, (before) => {
          const after = afterIdleWindow(before, busy, limits)
          return [after.release, after.state]
        }),
        (due) => (due ? release : Effect.void)
      ))
    yield* Effect.forkScoped(
      Effect.forever(Effect.zipRight(Effect.sleep(IDLE_WINDOW_MS), sample)).pipe(Effect.interruptible)
    )
  })

/**
 * glibc's `malloc_trim`, which hands back the free pages inside every arena, not only those at an
 * arena's end as `free` does; Node has no binding for it, so it is called through koffi's FFI, on
 * a thread of libuv's pool: the walk over the arenas takes up to tens of milliseconds, which the
 * event loop (a live call's audio) does not wait for. None where the C library is not glibc (musl,
 * macOS, Windows): those allocators give memory back their own way.
 */
export const glibcMallocTrim = Effect.gen(function*() {
  if (process.platform !== "linux") return Option.none()
  return yield* Effect.tryPromise(async () => {
    const { default: koffi } = await import("koffi")
    const trim = koffi.load("libc.so.6").func("int malloc_trim(size_t pad)")
    return Effect.async<number>((resume) => {
      trim.async(0, (error: unknown, released: number) => resume(error ? Effect.die(error) : Effect.succeed(released)))
    })
  }).pipe(Effect.option)
})

const megabytes = (bytes: number) => Math.round(bytes / 1024 ** 2)

const releaseWith = (trim: Effect.Effect<number>) =>
  Effect.gen(function*() {
    const before = process.memoryUsage.rss()
    yield* trim
    yield* Effect.logDebug("gave freed memory back to the operating system", {
      rssBeforeMb: megabytes(before),
      rssAfterMb: megabytes(process.memoryUsage.rss())
    })
  }).pipe(Effect.withSpan("IdleMemory.release"))

/**
 * A quiet server gives back what its allocator kept after busy spells (at start: compiling
 * talkgraph's code and the embedded database's WebAssembly), ~30–70 MB of its idle RSS.
 * `TALKGRAPH_RELEASE_IDLE_MEMORY=false` turns it off.
 */
export const IdleMemoryReleaseLive = Layer.scopedDiscard(
  Effect.gen(function*() {
    const enabled = yield* Config.boolean("TALKGRAPH_RELEASE_IDLE_MEMORY").pipe(Config.withDefault(true))
    if (!enabled) return
    const trim = yield* glibcMallocTrim
    if (Option.isNone(trim)) return
    yield* makeIdleMemoryRelease(yield* eventLoopUtilization, releaseWith(trim.value))
  })
)
