import type { CreatedWindow } from "./dates.ts"
import type { UsageFilter } from "./filters.ts"

/**
 * Totals can come from `run_daily_usage` (per organization and UTC day) when a report has no
 * filter, one filter on a low-cardinality attribute (rows per value; each run has exactly one
 * value, so summing the listed values is exact), or several filters on direction, channel and
 * disposition, each at most once (rows per combination of the three).
 */
export type RollupSlice =
  | {
    readonly _tag: "Dimension"
    readonly dimension: "all" | "workflow" | "campaign" | "disposition" | "direction" | "channel"
    readonly values: ReadonlyArray<string>
  }
  | { readonly _tag: "Profile"; readonly filters: ReadonlyArray<ProfileFilter> }

export type ProfileFilter = Extract<UsageFilter, { readonly _tag: "Direction" | "Channel" | "Disposition" }>

const isProfileFilter = (filter: UsageFilter): filter is ProfileFilter =>
  filter._tag === "Direction" || filter._tag === "Channel" || filter._tag === "Disposition"

const single = (filter: UsageFilter): RollupSlice | undefined => {
  switch (filter._tag) {
    case "WorkflowId":
      return { _tag: "Dimension", dimension: "workflow", values: [String(filter.id)] }
    case "CampaignId":
      return { _tag: "Dimension", dimension: "campaign", values: [String(filter.id)] }
    case "Disposition":
      return { _tag: "Dimension", dimension: "disposition", values: filter.codes }
    case "Direction":
      return { _tag: "Dimension", dimension: "direction", values: [filter.direction] }
    case "Channel":
      return { _tag: "Dimension", dimension: "channel", values: [filter.channel] }
    default:
      return undefined
  }
}

export const rollupSlice = (filters: ReadonlyArray<UsageFilter>): RollupSlice | undefined => {
  const [first] = filters
  if (first === undefined) return { _tag: "Dimension", dimension: "all", values: [""] }
  if (filters.length === 1) return single(first)
  const tags = new Set(filters.map((filter) => filter._tag))
  return tags.size === filters.length && filters.every(isProfileFilter) ? { _tag: "Profile", filters } : undefined
}

const DAY_MS = 86_400_000

/**
 * A window cut at UTC midnights: whole days (`firstDay` inclusive, `endDay` exclusive, `null` when
 * open) that the rollup answers, and the partial days at either end, counted from `runs`.
 */
export interface DaySplit {
  readonly firstDay: string | null
  readonly endDay: string | null
  readonly edges: ReadonlyArray<CreatedWindow>
}

const dayOf = (ms: number) => new Date(ms).toISOString().slice(0, 10)

/** `undefined` when the window holds no whole day (then everything is counted from `runs`). */
export const splitByUtcDay = (window: CreatedWindow): DaySplit | undefined => {
  const from = window.from?.getTime()
  const before = window.before?.getTime()
  const dayStart = from === undefined ? undefined : Math.ceil(from / DAY_MS) * DAY_MS
  const dayEnd = before === undefined ? undefined : Math.floor(before / DAY_MS) * DAY_MS
  if (dayStart !== undefined && dayEnd !== undefined && dayStart >= dayEnd) return undefined
  const edges: Array<CreatedWindow> = []
  if (from !== undefined && dayStart !== undefined && from < dayStart) {
    edges.push({ from: new Date(from), before: new Date(dayStart) })
  }
  if (before !== undefined && dayEnd !== undefined && dayEnd < before) {
    edges.push({ from: new Date(dayEnd), before: new Date(before) })
  }
  return {
    firstDay: dayStart === undefined ? null : dayOf(dayStart),
    endDay: dayEnd === undefined ? null : dayOf(dayEnd),
    edges
  }
}
