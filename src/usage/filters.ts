import { Either } from "effect"
import { jsonValueProblems } from "../domain/storableValues.ts"
import { ReviewTags } from "../quality/qualityReview.ts"
import { type Channel, isChannel } from "./channels.ts"

/**
 * One condition of the usage report, as parsed from the `filters` query parameter
 * (spec "List runs with usage"). Several conditions all apply (AND).
 */
export type UsageFilter =
  | { readonly _tag: "RunId"; readonly id: number }
  | { readonly _tag: "WorkflowId"; readonly id: number }
  | { readonly _tag: "CampaignId"; readonly id: number }
  | { readonly _tag: "CallerNumber"; readonly contains: string }
  | { readonly _tag: "CalledNumber"; readonly contains: string }
  | { readonly _tag: "Disposition"; readonly codes: ReadonlyArray<string> }
  | { readonly _tag: "Duration"; readonly min: number | null; readonly max: number | null }
  | { readonly _tag: "Direction"; readonly direction: "inbound" | "outbound" }
  | { readonly _tag: "Channel"; readonly channel: Channel }
  /** Agent tests' conversations (modes `testchat` and `testcall`): only them, or everything but them. */
  | { readonly _tag: "TestRuns"; readonly only: boolean }
  /** Runs whose quality review scored within the bounds (1–10, inclusive). */
  | { readonly _tag: "QualityScore"; readonly min: number | null; readonly max: number | null }
  /** Runs whose quality review gave any of these issue tags. */
  | { readonly _tag: "QualityTag"; readonly tags: ReadonlyArray<string> }

type Value = Record<string, unknown>
/** `undefined`: the filter matches everything and is dropped; a string: the input is unusable. */
type Parsed = UsageFilter | undefined | string

const isRecord = (value: unknown): value is Value =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** Ids are bigint columns: only whole numbers a bigint holds may reach the query. */
const idFrom = (raw: unknown): number | undefined => {
  const id = typeof raw === "string" && /^\s*-?\d+\s*$/.test(raw) ? Number(raw) : raw
  return typeof id === "number" && Number.isSafeInteger(id) ? id : undefined
}

const numberFrom = (raw: unknown): number | null | undefined => {
  if (raw === null || raw === undefined || raw === "") return null
  const value = typeof raw === "string" ? Number(raw) : raw
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

/**
 * People paste numbers with spaces, dashes, dots and brackets; stored numbers are E.164, so a
 * query made only of such characters is compared by its digits (and a leading `+`).
 */
export const phoneSearchText = (raw: string): string => {
  const trimmed = raw.trim()
  if (!/^[+\d\s().-]*$/.test(trimmed)) return trimmed
  return (trimmed.startsWith("+") ? "+" : "") + trimmed.replace(/\D/g, "")
}

const INT_MIN = -2_147_483_648
const INT_MAX = 2_147_483_647

/** Durations are whole seconds, so fractional bounds round inwards and stay inclusive. */
const durationBound = (value: number, side: "min" | "max") =>
  Math.min(INT_MAX, Math.max(INT_MIN, side === "min" ? Math.ceil(value) : Math.floor(value)))

const byId = (tag: "RunId" | "WorkflowId" | "CampaignId", at: string) => (value: Value): Parsed => {
  const id = idFrom(value.value)
  return id === undefined ? `${at}.value.value must be a whole number` : { _tag: tag, id }
}

const bySubstring = (tag: "CallerNumber" | "CalledNumber", at: string) => (value: Value): Parsed => {
  if (typeof value.value !== "string") return `${at}.value.value must be a string`
  const contains = phoneSearchText(value.value)
  return contains === "" ? undefined : { _tag: tag, contains }
}

const byDisposition = (at: string) => (value: Value): Parsed => {
  const codes = value.codes
  if (!Array.isArray(codes) || !codes.every((code) => typeof code === "string")) {
    return `${at}.value.codes must be an array of strings`
  }
  return codes.length === 0 ? undefined : { _tag: "Disposition", codes: [...new Set(codes as Array<string>)] }
}

const byDuration = (at: string) => (value: Value): Parsed => {
  const min = numberFrom(value.min)
  const max = numberFrom(value.max)
  if (min === undefined) return `${at}.value.min must be a number of seconds`
  if (max === undefined) return `${at}.value.max must be a number of seconds`
  if (min !== null && max !== null && min > max) return `${at}.value.min must not be greater than max`
  if (min === null && max === null) return undefined
  return {
    _tag: "Duration",
    min: min === null ? null : durationBound(min, "min"),
    max: max === null ? null : durationBound(max, "max")
  }
}

const byQualityScore = (at: string) => (value: Value): Parsed => {
  const min = numberFrom(value.min)
  const max = numberFrom(value.max)
  const inRange = (bound: number | null | undefined) =>
    bound === null || (bound !== undefined && bound >= 1 && bound <= 10)
  if (!inRange(min)) return `${at}.value.min must be a score from 1 to 10`
  if (!inRange(max)) return `${at}.value.max must be a score from 1 to 10`
  if (min != null && max != null && min > max) return `${at}.value.min must not be greater than max`
  if (min == null && max == null) return undefined
  return { _tag: "QualityScore", min: min == null ? null : Math.ceil(min), max: max == null ? null : Math.floor(max) }
}

const byQualityTag = (at: string) => (value: Value): Parsed => {
  const tags = value.tags
  if (
    !Array.isArray(tags) ||
    !tags.every((tag) => typeof tag === "string" && (ReviewTags as ReadonlyArray<string>).includes(tag))
  ) {
    return `${at}.value.tags must be an array of: ${ReviewTags.join(", ")}`
  }
  return tags.length === 0 ? undefined : { _tag: "QualityTag", tags: [...new Set(tags as Array<string>)] }
}

/** Radio filters: a known status narrows the report, any other value means "all" (spec). */
const statusOf = (value: Value) => (typeof value.status === "string" ? value.status.trim().toLowerCase() : "")

const byDirection = (value: Value): Parsed => {
  const status = statusOf(value)
  return status === "inbound" || status === "outbound" ? { _tag: "Direction", direction: status } : undefined
}

const byChannel = (value: Value): Parsed => {
  const status = statusOf(value)
  return isChannel(status) ? { _tag: "Channel", channel: status } : undefined
}

const byTestRuns = (value: Value): Parsed => {
  const status = statusOf(value)
  return status === "only" || status === "exclude" ? { _tag: "TestRuns", only: status === "only" } : undefined
}

/** The supported attribute/type pairs; anything else is ignored (spec). */
const parsers = (at: string): Record<string, Record<string, (value: Value) => Parsed>> => ({
  runId: { number: byId("RunId", at) },
  workflowId: { number: byId("WorkflowId", at) },
  campaignId: { number: byId("CampaignId", at) },
  callerNumber: { text: bySubstring("CallerNumber", at) },
  calledNumber: { text: bySubstring("CalledNumber", at) },
  dispositionCode: { multiSelect: byDisposition(at) },
  duration: { numberRange: byDuration(at) },
  callDirection: { radio: byDirection },
  callChannel: { radio: byChannel },
  testRuns: { radio: byTestRuns },
  qualityScore: { numberRange: byQualityScore(at) },
  qualityTag: { multiSelect: byQualityTag(at) }
})

const SHAPE = "a JSON array of {attribute, type, value} objects"

/**
 * Parses the `filters` query parameter. Unknown attributes and unsupported types are dropped;
 * text that is not JSON, or a known filter whose value has the wrong shape, is refused with a
 * message saying which entry is wrong.
 */
export const parseUsageFilters = (raw: string): Either.Either<ReadonlyArray<UsageFilter>, string> => {
  if (raw.trim() === "") return Either.right([])
  let json: unknown
  try {
    json = JSON.parse(raw)
  } catch {
    return Either.left(`filters is not valid JSON; expected ${SHAPE}`)
  }
  if (!Array.isArray(json)) return Either.left(`filters must be ${SHAPE}`)
  const unstorable = jsonValueProblems(json)[0]
  if (unstorable) {
    const at = unstorable.path.map((key) => (typeof key === "number" ? `[${key}]` : `.${key}`)).join("")
    return Either.left(`filters${at}: ${unstorable.reason}`)
  }
  const filters: Array<UsageFilter> = []
  for (const [index, entry] of json.entries()) {
    const at = `filters[${index}]`
    if (!isRecord(entry) || typeof entry.attribute !== "string" || typeof entry.type !== "string") {
      return Either.left(`${at} must be an object with string "attribute" and "type"`)
    }
    const byType = parsers(at)
    const types = Object.hasOwn(byType, entry.attribute) ? byType[entry.attribute] : undefined
    const parse = types && Object.hasOwn(types, entry.type) ? types[entry.type] : undefined
    if (!parse) continue
    if (!isRecord(entry.value)) return Either.left(`${at}.value must be an object`)
    const parsed = parse(entry.value)
    if (typeof parsed === "string") return Either.left(parsed)
    if (parsed) filters.push(parsed)
  }
  return Either.right(filters)
}
