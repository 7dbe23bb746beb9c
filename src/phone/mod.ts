export { type CountryCode, toE164 } from "./e164.ts"
export { asRegion } from "./regions.ts"
