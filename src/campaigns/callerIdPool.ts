import { Schema } from "effect"
import { parsePhoneNumberFromString } from "libphonenumber-js/max"

const int = (min: number, max: number) => Schema.Int.pipe(Schema.between(min, max))

/**
 * A campaign that dials from several of its telephony configuration's numbers: in turn
 * (`round_robin`) or, with `local_presence`, from the pool number closest to each recipient's
 * (same country calling code, then the longest shared leading digits: the area code in
 * NANP countries). Each number may be capped per second and per day (a rolling 24 hours),
 * counted across every campaign and single call of the organization.
 */
export const CallerIdPool = Schema.Struct({
  strategy: Schema.Literal("round_robin", "local_presence"),
  phone_number_ids: Schema.NullOr(
    Schema.Array(Schema.Int.pipe(Schema.positive())).pipe(
      Schema.minItems(1),
      Schema.maxItems(1000)
    )
  ).annotations({
    description: "The numbers (ids of the configuration's phone numbers) to dial from; null: every active number"
  }),
  max_calls_per_second_per_number: Schema.NullOr(int(1, 100)),
  max_calls_per_day_per_number: Schema.NullOr(int(1, 1_000_000))
}).annotations({ identifier: "CallerIdPool" })
export type CallerIdPool = typeof CallerIdPool.Type

/** The request form: only the strategy is required. */
export const CallerIdPoolInput = Schema.Struct({
  strategy: CallerIdPool.fields.strategy,
  phone_number_ids: Schema.optional(CallerIdPool.fields.phone_number_ids),
  max_calls_per_second_per_number: Schema.optional(CallerIdPool.fields.max_calls_per_second_per_number),
  max_calls_per_day_per_number: Schema.optional(CallerIdPool.fields.max_calls_per_day_per_number)
}).annotations({ identifier: "CallerIdPoolInput" })
export type CallerIdPoolInput = typeof CallerIdPoolInput.Type

export const callerIdPoolOf = (input: CallerIdPoolInput): CallerIdPool => ({
  strategy: input.strategy,
  phone_number_ids: input.phone_number_ids ?? null,
  max_calls_per_second_per_number: input.max_calls_per_second_per_number ?? null,
  max_calls_per_day_per_number: input.max_calls_per_day_per_number ?? null
})

/** A pool number and how many more calls its caps allow right now (Infinity: uncapped). */
export interface PoolNumber {
  readonly address: string
  readonly room: number
}

interface Locality {
  readonly callingCode: string
  readonly national: string
}

const localityOf = (address: string): Locality | undefined => {
  const parsed = parsePhoneNumberFromString(address)
  return parsed ? { callingCode: parsed.countryCallingCode, national: parsed.nationalNumber } : undefined
}

/** 0: another country (or not a phone number); otherwise 1 + the national digits the two share from the start. */
const closeness = (a: Locality | undefined, b: Locality | undefined) => {
  if (!a || !b || a.callingCode !== b.callingCode) return 0
  let shared = 0
  while (shared < a.national.length && shared < b.national.length && a.national[shared] === b.national[shared]) {
    shared++
  }
  return 1 + shared
}

/**
 * The caller ID of each recipient, in order, never giving a number more calls than its room.
 * Round robin starts at `start` (so successive claims rotate) and skips numbers without room;
 * local presence takes, among the numbers with room, those closest to the recipient and rotates
 * among equals. Recipients beyond the pool's total room get `undefined` (the claim takes no more
 * than that, so this does not happen there).
 */
export const assignCallerIds = (
  strategy: CallerIdPool["strategy"],
  pool: ReadonlyArray<PoolNumber>,
  recipients: ReadonlyArray<string>,
  start: number
): Array<string | undefined> => {
  const room = pool.map((number) => number.room)
  const size = pool.length
  let turn = size === 0 ? 0 : ((start % size) + size) % size
  const localities = strategy === "local_presence" ? pool.map((number) => localityOf(number.address)) : []
  const nextFree = (allowed: (index: number) => boolean) => {
    for (let step = 0; step < size; step++) {
      const index = (turn + step) % size
      if (room[index]! > 0 && allowed(index)) {
        turn = (index + 1) % size
        return index
      }
    }
    return undefined
  }
  return recipients.map((recipient) => {
    let index: number | undefined
    if (strategy === "local_presence") {
      const target = localityOf(recipient)
      const scores = localities.map((locality) => closeness(locality, target))
      const best = Math.max(0, ...scores.filter((_, i) => room[i]! > 0))
      index = nextFree((i) => scores[i] === best)
    } else {
      index = nextFree(() => true)
    }
    if (index === undefined) return undefined
    room[index] = room[index]! - 1
    return pool[index]!.address
  })
}

/** How many calls the pool can place now: the sum of its numbers' room. */
export const poolRoom = (pool: ReadonlyArray<PoolNumber>) => pool.reduce((sum, number) => sum + number.room, 0)
