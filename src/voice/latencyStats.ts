/** Nearest-rank percentile of per-turn latencies (ms); null without any turn. */
export const percentile = (values: ReadonlyArray<number>, fraction: number): number | null => {
  if (values.length === 0) return null
  const sorted = [...values].sort((a, b) => a - b)
  const rank = Math.max(1, Math.ceil(fraction * sorted.length))
  return Math.round(sorted[rank - 1]!)
}

/** What a run shows of its turn latencies: caller stops speaking → first agent audio. */
export const latencySummary = (values: ReadonlyArray<number>) => ({
  p50_ms: percentile(values, 0.5),
  p90_ms: percentile(values, 0.9),
  turns: values.length
})
