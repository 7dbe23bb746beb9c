import { parsePhoneNumberFromString } from "libphonenumber-js/max"
import { zonesByAreaCode } from "./areaZones.ts"
import { countryZones } from "./countryZones.ts"
import { nanpZones } from "./nanpZones.ts"

const validZones = new Map<string, boolean>()

/** Whether `zone` is an IANA zone this runtime knows (what a CSV's `timezone` column must be). */
export const isTimeZone = (zone: string): boolean => {
  const known = validZones.get(zone)
  if (known !== undefined) return known
  let valid = zone !== "" && zone.length <= 64
  if (valid) {
    try {
      new Intl.DateTimeFormat("en-US", { timeZone: zone })
    } catch {
      valid = false
    }
  }
  if (validZones.size < 10_000) validZones.set(zone, valid)
  return valid
}

/**
 * The zones a recipient may be in, from what is known of them: an IANA zone given with the contact
 * wins; else the number's country and, where the country has several zones, its area code. A
 * number that still leaves several zones is in any of them (the caller allows a call only when
 * every one is in its hours). Empty: nothing is known (a non-geographic number).
 */
export const recipientZones = (e164: string, givenZone?: string | undefined): ReadonlyArray<string> => {
  if (givenZone !== undefined && isTimeZone(givenZone)) return [givenZone]
  const parsed = parsePhoneNumberFromString(e164)
  const country = parsed?.country
  if (parsed === undefined || country === undefined) return []
  const zones = countryZones[country] ?? []
  if (zones.length <= 1) return zones
  const national = parsed.nationalNumber as string
  if (country === "US" || country === "CA") return nanpZones.get(national.slice(0, 3)) ?? zones
  return zonesByAreaCode(country, national) ?? zones
}

/** The zones as stored with a contact: sorted, space-separated (null when none are known). */
export const zoneKey = (zones: ReadonlyArray<string>): string | null =>
  zones.length === 0 ? null : [...zones].sort().join(" ")

export const zonesOfKey = (key: string): ReadonlyArray<string> => key.split(" ")

/** Every zone of a country (ISO 3166 code). */
export const countryZonesOf = (country: string): ReadonlyArray<string> => countryZones[country] ?? []
