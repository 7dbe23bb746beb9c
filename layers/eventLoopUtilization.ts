import { Effect } from "effect"
import { performance } from "node:perf_hooks"

/** Makes a reader of the share of time the event loop was busy (0–1) since the reader last ran. */
export const eventLoopUtilization = Effect.sync(() => {
  let previous = performance.eventLoopUtilization()
  return Effect.sync(() => {
    const window = performance.eventLoopUtilization(previous)
    previous = performance.eventLoopUtilization()
    return window.utilization
  })
})
