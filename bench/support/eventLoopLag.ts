import { monitorEventLoopDelay } from "node:perf_hooks"

export interface LoopLagFigures {
  readonly p50_ms: number
  readonly p99_ms: number
  readonly max_ms: number
}

const ms = (ns: number) => Math.round(ns / 1e4) / 100

/**
 * This process's event-loop delay. A benchmark resets it when its warm-up ends, so module
 * loading, seeding and first-request compilation do not count in the figures it prints.
 */
export const eventLoopLag = () => {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  return {
    reset: () => histogram.reset(),
    figures: (): LoopLagFigures => ({
      p50_ms: ms(histogram.percentile(50)),
      p99_ms: ms(histogram.percentile(99)),
      max_ms: ms(histogram.max)
    }),
    stop: () => histogram.disable()
  }
}
