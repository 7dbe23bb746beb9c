import { type CountryCode, isSupportedCountry } from "libphonenumber-js/max"

/** An ISO 3166 alpha-2 region libphonenumber knows, upper-cased; anything else is rejected. */
export const asRegion = (value: string): CountryCode | undefined => {
  const upper = value.trim().toUpperCase()
  return isSupportedCountry(upper) ? upper : undefined
}
