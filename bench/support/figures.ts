import { appendFileSync } from "node:fs"
import * as os from "node:os"

/** One measured figure, with the target it is held to when there is one. */
export interface Figure {
  readonly name: string
  readonly value: number
  readonly unit: string
  /** e.g. "<= 50": the figure meets it when the comparison holds. */
  readonly target?: string
}

/** Whether a figure meets its target ("<= 50", ">= 50000", "< 2"); `undefined` without one. */
export const meetsTarget = (figure: Figure): boolean | undefined => {
  const match = figure.target?.match(/^\s*(<=|>=|<|>)\s*([\d.]+)\s*$/)
  if (!match) return undefined
  const bound = Number(match[2])
  switch (match[1]) {
    case "<=":
      return figure.value <= bound
    case ">=":
      return figure.value >= bound
    case "<":
      return figure.value < bound
    default:
      return figure.value > bound
  }
}

/** The machine a figure was measured on, printed beside it. */
export const machine = () => ({
  cores: os.cpus().length,
  cpu: os.cpus()[0]?.model.trim() ?? "unknown",
  node: process.version,
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  loadAverage: Number(os.loadavg()[0]!.toFixed(2))
})

/**
 * Prints a benchmark's figures, and hands them to `bench/run.ts` (which sets BENCH_FIGURES_FILE)
 * for its table.
 */
export const reportFigures = (
  benchmark: string,
  database: string,
  figures: ReadonlyArray<Figure>
) => {
  const host = machine()
  console.log(
    `\n${benchmark} on ${database}; ${host.cores} cores (${host.cpu}), Node ${host.node}, load average ${host.loadAverage}`
  )
  for (const figure of figures) {
    const met = meetsTarget(figure)
    console.log(
      `  ${figure.name.padEnd(44)} ${String(figure.value).padStart(10)} ${figure.unit.padEnd(8)} ${
        figure.target ? `target ${figure.target}${met ? "  ok" : "  MISSED"}` : ""
      }`
    )
  }
  const file = process.env.BENCH_FIGURES_FILE
  if (file) appendFileSync(file, `${JSON.stringify({ benchmark, database, machine: host, figures })}\n`)
}

/** The database a benchmark ran on, as the runner prints it. */
export const databaseName = (databaseUrl: string | undefined, serverVersion?: string) =>
  databaseUrl ? `PostgreSQL ${serverVersion ?? ""}`.trim() : "PGlite (embedded)"
