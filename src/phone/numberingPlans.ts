import metadata from "libphonenumber-js/max/metadata"

/**
 * libphonenumber-js's "max" metadata, with every pattern compiled once. The library itself builds
 * a new RegExp from the pattern text on every check, which made phone validation half of the
 * CPU time of a CSV import; these plans are what `e164.ts` validates with instead.
 */
export interface NumberingPlan {
  readonly callingCode: string
  /** Unanchored, as the library searches with it. */
  readonly iddPrefix: RegExp
  /** Anchored at both ends. */
  readonly nationalNumber: RegExp
  readonly possibleLengths: ReadonlyArray<number> | undefined
  /** Anchored at the start. */
  readonly nationalPrefixForParsing: RegExp | undefined
  readonly nationalPrefixTransformRule: string | undefined
  /** Unanchored; a match at index 0 picks this region among those sharing a calling code. */
  readonly leadingDigits: RegExp | undefined
  /** Fixed line, mobile, toll free, …; undefined when the plan lists no types. */
  readonly types: ReadonlyArray<NumberTypePattern> | undefined
}

interface NumberTypePattern {
  readonly pattern: RegExp
  /** The lengths a number of this type can have; undefined means any. */
  readonly possibleLengths: ReadonlyArray<number> | undefined
}

/** The positions of a region's fields in the compact metadata (its layout version 4). */
const Field = {
  CallingCode: 0,
  IddPrefix: 1,
  NationalNumberPattern: 2,
  PossibleLengths: 3,
  NationalPrefix: 5,
  NationalPrefixForParsing: 7,
  NationalPrefixTransformRule: 8,
  LeadingDigits: 10,
  Types: 11
} as const

type RawType = readonly [string, ReadonlyArray<number>?] | 0
type RawPlan = ReadonlyArray<unknown>

interface RawMetadata {
  readonly version: number
  readonly country_calling_codes: Record<string, ReadonlyArray<string>>
  readonly countries: Record<string, RawPlan>
  readonly nonGeographic?: Record<string, RawPlan>
}

const raw = metadata as unknown as RawMetadata
if (raw.version !== 4) {
  // Another layout would be misread silently; the equivalence test would catch it, this says why.
  throw new Error(`libphonenumber-js metadata version ${raw.version} is not the layout (4) numberingPlans.ts reads`)
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)
const lengths = (value: unknown): ReadonlyArray<number> | undefined =>
  Array.isArray(value) ? (value as ReadonlyArray<number>) : undefined
const whole = (pattern: string) => new RegExp(`^(?:${pattern})$`)

const compile = (plan: RawPlan): NumberingPlan => {
  const possibleLengths = lengths(plan[Field.PossibleLengths])
  const nationalPrefix = text(plan[Field.NationalPrefix])
  const forParsing = text(plan[Field.NationalPrefixForParsing]) ?? nationalPrefix
  const leadingDigits = text(plan[Field.LeadingDigits])
  const rawTypes = plan[Field.Types] as ReadonlyArray<RawType> | undefined
  return {
    callingCode: plan[Field.CallingCode] as string,
    iddPrefix: new RegExp(plan[Field.IddPrefix] as string),
    nationalNumber: whole(plan[Field.NationalNumberPattern] as string),
    possibleLengths,
    nationalPrefixForParsing: forParsing === undefined ? undefined : new RegExp(`^(?:${forParsing})`),
    nationalPrefixTransformRule: text(plan[Field.NationalPrefixTransformRule]),
    leadingDigits: leadingDigits === undefined ? undefined : new RegExp(leadingDigits),
    types: rawTypes && rawTypes.length > 0
      ? rawTypes.flatMap((type) =>
        type && type[0] ? [{ pattern: whole(type[0]), possibleLengths: lengths(type[1]) ?? possibleLengths }] : []
      )
      : undefined
  }
}

const plans = new Map(Object.entries(raw.countries).map(([country, plan]) => [country, compile(plan)]))

/** The plan of an ISO 3166 region, if the metadata has one. */
export const planOf = (country: string): NumberingPlan | undefined => plans.get(country)

const regionsByCode = new Map(
  Object.entries(raw.country_calling_codes).flatMap(([code, countries]) => {
    const regions = countries.map((country) => plans.get(country))
    // The library reads a list naming no region it has (older metadata's "001") as no regions.
    return regions.every((plan) => plan !== undefined) ? [[code, regions] as const] : []
  })
)

/**
 * The regions sharing a calling code, main region first (NANPA's +1 is US, CA, …). Undefined for
 * a code that is not a region's (see `isNonGeographicCode`) or not a calling code at all.
 */
export const regionsOf = (callingCode: string): ReadonlyArray<NumberingPlan> | undefined =>
  regionsByCode.get(callingCode)

/** Calling codes of global services (+800 freephone, +882 networks, …), which belong to no region. */
export const isNonGeographicCode = (callingCode: string): boolean =>
  raw.nonGeographic !== undefined && Object.hasOwn(raw.nonGeographic, callingCode)
