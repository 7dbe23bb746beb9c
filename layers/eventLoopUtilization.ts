import { Effect } from "effect"
import { performance } from "node:perf_hooks"
import { busyShare } from "../src/memory/loopBusyShare.ts"

/**
 * Makes a reader of the share of time the event loop was busy (0–1) since the reader last ran,
 * checked against the CPU the process used meanwhile (see `busyShare`).
 */
export const eventLoopUtilization = Effect.sync(() => {
  let previous = performance.eventLoopUtilization()
  let cpu = process.cpuUsage()
  let at = performance.now()
  return Effect.sync(() => {
    const window = performance.eventLoopUtilization(previous)
    const cpuWindow = process.cpuUsage(cpu)
    const now = performance.now()
    const cpuShare = now > at ? (cpuWindow.user + cpuWindow.system) / 1000 / (now - at) : 0
    previous = performance.eventLoopUtilization()
    cpu = process.cpuUsage()
    at = now
    return busyShare(window.utilization, cpuShare)
  })
})
