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
    previous = performance.eventLoopUtilization()
    const cpuNow = process.cpuUsage()
    const now = performance.now()
    const usedMs = (cpuNow.user - cpu.user + cpuNow.system - cpu.system) / 1000
    const cpuShare = now > at ? usedMs / (now - at) : 0
    cpu = cpuNow
    at = now
    return busyShare(window.utilization, cpuShare)
  })
})
