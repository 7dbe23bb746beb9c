import { type CountryCode, isSupportedCountry, parsePhoneNumberFromString } from "libphonenumber-js/max"

export type { CountryCode }

/** An ISO 3166 alpha-2 region libphonenumber knows, upper-cased; anything else is rejected. */
export const asRegion = (value: string): CountryCode | undefined => {
  const upper = value.trim().toUpperCase()
  return isSupportedCountry(upper) ? upper : undefined
}

/**
 * A dialable number in E.164 form, or undefined. Numbers written without `+` are read in the
 * default region; without one they cannot be placed and are refused.
 */
export const toE164 = (raw: string, defaultRegion: CountryCode | undefined): string | undefined => {
  const text = raw.trim()
  if (text === "") return undefined
  if (!text.startsWith("+") && defaultRegion === undefined) return undefined
  const parsed = defaultRegion ? parsePhoneNumberFromString(text, defaultRegion) : parsePhoneNumberFromString(text)
  return parsed && parsed.isValid() ? parsed.number : undefined
}
