import { recipientZones, zoneKey } from "./recipientZones.ts"

/** The CSV column that gives a contact's IANA zone, overriding what its number says. */
export const TIMEZONE_COLUMN = "timezone"

/** NANP numbers' zones depend on `+1` and the area code only: worked out once per area code. */
const byNanpAreaCode = new Map<string, string | null>()

/** A contact's zones as stored with it (`zoneKey`), from its `timezone` column or its number. */
export const contactZoneKey = (phoneNumber: string, context: Readonly<Record<string, string>>): string | null => {
  const given = Object.hasOwn(context, TIMEZONE_COLUMN) ? context[TIMEZONE_COLUMN]!.trim() : ""
  if (given !== "") return zoneKey(recipientZones(phoneNumber, given))
  if (!phoneNumber.startsWith("+1")) return zoneKey(recipientZones(phoneNumber))
  const areaCode = phoneNumber.slice(0, 5)
  let key = byNanpAreaCode.get(areaCode)
  if (key === undefined) {
    key = zoneKey(recipientZones(phoneNumber))
    byNanpAreaCode.set(areaCode, key)
  }
  return key
}
