// Preloaded into a benchmarked server (node --import): samples its event-loop delay and writes
// the histogram's figures to BENCH_LOOP_LAG_FILE every second, so the figures survive a kill.
import { writeFileSync } from "node:fs"
import { monitorEventLoopDelay } from "node:perf_hooks"

const file = process.env.BENCH_LOOP_LAG_FILE
if (file) {
  const histogram = monitorEventLoopDelay({ resolution: 10 })
  histogram.enable()
  setInterval(() => {
    const ms = (ns) => Math.round(ns / 1e4) / 100
    writeFileSync(
      file,
      JSON.stringify({
        p50_ms: ms(histogram.percentile(50)),
        p99_ms: ms(histogram.percentile(99)),
        max_ms: ms(histogram.max)
      })
    )
  }, 1000).unref()
  process.on("SIGUSR2", () => histogram.reset())
}
