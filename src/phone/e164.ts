import { type CountryCode, parsePhoneNumberFromString } from "libphonenumber-js/max"
import { isNonGeographicCode, type NumberingPlan, planOf, regionsOf } from "./numberingPlans.ts"

export type { CountryCode }

/**
 * A dialable number in E.164 form, or undefined. Numbers written without `+` are read in the
 * default region; without one they cannot be placed and are refused.
 *
 * Same answers as libphonenumber-js (`parsePhoneNumberFromString(raw, region)` then `isValid()`
 * and `.number`), proven on a generated corpus in test/e164.test.ts. Numbers written the common
 * way (ASCII digits, `+`, spaces, dashes, dots, slashes, parentheses) take a port of the
 * library's parse with patterns compiled once, many times faster; anything else (letters,
 * extensions, `tel:` URIs, other scripts' digits, global service codes) goes to the library.
 */
export const toE164 = (raw: string, defaultRegion: CountryCode | undefined): string | undefined => {
  const text = raw.trim()
  if (text === "") return undefined
  if (!text.startsWith("+") && defaultRegion === undefined) return undefined
  const common = parseCommonForm(text, defaultRegion)
  if (common !== notCommon) return common
  const parsed = defaultRegion ? parsePhoneNumberFromString(text, defaultRegion) : parsePhoneNumberFromString(text)
  return parsed && parsed.isValid() ? parsed.number : undefined
}

const notCommon = Symbol("notCommon")

/** The library refuses longer input outright, to bound its regular expressions' work. */
const MAX_INPUT_LENGTH = 250
const COMMON_FORM = /^[0-9+\-(). /]*$/
const NOT_DIGIT = /[^0-9]/g
const MIN_NATIONAL_LENGTH = 2
const MAX_NATIONAL_LENGTH = 17
const MAX_CALLING_CODE_LENGTH = 3

const isDigit = (code: number) => code >= 48 && code <= 57

/**
 * The port of the library's `parse()` + `isValid()` for text made only of the common characters.
 * Each step names the library function it mirrors (libphonenumber-js 1.12, `source/`).
 */
const parseCommonForm = (text: string, region: CountryCode | undefined): string | undefined | typeof notCommon => {
  if (text.length > MAX_INPUT_LENGTH || !COMMON_FORM.test(text)) return notCommon
  const regionPlan = region === undefined ? undefined : planOf(region)
  if (region !== undefined && regionPlan === undefined) return notCommon

  // parse.js extractFormattedPhoneNumber: from the first `+` or digit to the last digit.
  let start = 0
  while (start < text.length && text[start] !== "+" && !isDigit(text.charCodeAt(start))) start++
  let end = text.length
  while (end > start && !isDigit(text.charCodeAt(end - 1))) end--
  const formatted = text.slice(start, end)
  if (formatted === "") return undefined

  // isViablePhoneNumber: a `+` only in front, and exactly two digits or at least three.
  if (formatted.indexOf("+", 1) >= 0) return undefined
  const international = formatted[0] === "+"
  const digits = formatted.replace(NOT_DIGIT, "")
  const viable = digits.length >= 3 || (!international && digits.length === 2 && formatted.length === 2)
  if (!viable) return undefined

  const split = international ? splitInternational(digits) : splitNational(digits, regionPlan)
  if (split === undefined || split === notCommon) return split
  if (split.number === "") return undefined

  // parse.js parsePhoneNumber: the default region's plan for a national number, else the main
  // region's of the calling code; then the exact region, found from the national number.
  const plan = split.region ?? regionsOf(split.callingCode)![0]!
  const nationalNumber = extractNationalNumber(split.number, plan, split.region !== undefined)
  const exactPlan = regionByNationalNumber(split.callingCode, nationalNumber) ?? plan

  if (nationalNumber.length < MIN_NATIONAL_LENGTH || nationalNumber.length > MAX_NATIONAL_LENGTH) return undefined
  return isValid(nationalNumber, exactPlan) ? `+${split.callingCode}${nationalNumber}` : undefined
}

interface Split {
  readonly callingCode: string
  /** The digits after the calling code: national prefix (if written) and national number. */
  readonly number: string
  /** The default region, when the number was read as a national one. */
  readonly region?: NumberingPlan
}

/** extractCountryCallingCode for `+digits`: the calling code is the first 1–3 digits that are one. */
const splitInternational = (digits: string): Split | undefined | typeof notCommon => {
  if (digits[0] === "0") return undefined
  for (let length = 1; length <= MAX_CALLING_CODE_LENGTH && length <= digits.length; length++) {
    const callingCode = digits.slice(0, length)
    if (regionsOf(callingCode)) return { callingCode, number: digits.slice(length) }
    if (isNonGeographicCode(callingCode)) return notCommon
  }
  return undefined
}

/**
 * extractCountryCallingCode for digits without `+`, read in the default region: an IDD prefix
 * makes them international, so may a leading calling code, otherwise they are a national number.
 */
const splitNational = (digits: string, region: NumberingPlan | undefined): Split | undefined | typeof notCommon => {
  // toE164 refuses numbers without `+` when there is no default region.
  if (region === undefined) return notCommon
  const withoutIdd = stripIddPrefix(digits, region)
  if (withoutIdd !== undefined) return splitInternational(withoutIdd)
  return callingCodeWithoutPlus(digits, region) ?? { callingCode: region.callingCode, number: digits, region }
}

/**
 * stripIddPrefix: "011 44 20 …" dialled from the US is +44 20 …. The rest must not be empty or
 * start with 0 (no calling code does).
 */
const stripIddPrefix = (digits: string, plan: NumberingPlan): string | undefined => {
  const match = plan.iddPrefix.exec(digits)
  if (match === null || match.index !== 0) return undefined
  const rest = digits.slice(match[0].length)
  if (rest === "" || rest === digits || rest[0] === "0") return undefined
  return rest
}

/**
 * extractCountryCallingCodeFromInternationalNumberWithoutPlusSign: "14155550123" in the US is
 * +1 415…, when dropping the code turns an invalid or too long number into a valid one.
 */
const callingCodeWithoutPlus = (digits: string, plan: NumberingPlan): Split | undefined => {
  if (!digits.startsWith(plan.callingCode)) return undefined
  const shorter = digits.slice(plan.callingCode.length)
  const shorterNational = extractNationalNumber(shorter, plan, false)
  const national = extractNationalNumber(digits, plan, false)
  const better = (!plan.nationalNumber.test(national) && plan.nationalNumber.test(shorterNational)) ||
    numberLength(national, plan) === "TOO_LONG"
  return better ? { callingCode: plan.callingCode, number: shorter } : undefined
}

/**
 * extractNationalNumber: drops a national prefix (and carrier code) written before the number,
 * unless that leaves a number that cannot be one.
 */
const extractNationalNumber = (number: string, plan: NumberingPlan, regionKnown: boolean): string => {
  const national = withoutNationalPrefix(number, plan)
  if (national === number) return national
  if (plan.nationalNumber.test(number) && !plan.nationalNumber.test(national)) return number
  if (plan.possibleLengths) {
    // Its length must suit its region: the plan's own if known, else the one its digits point to.
    const region = regionKnown ? plan : regionByNationalNumber(plan.callingCode, national) ?? plan
    const length = numberLength(national, region)
    if (length === "TOO_SHORT" || length === "INVALID_LENGTH") return number
  }
  return national
}

/** extractNationalNumberFromPossiblyIncompleteNumber, without the carrier code nobody reads here. */
const withoutNationalPrefix = (number: string, plan: NumberingPlan): string => {
  if (number === "" || plan.nationalPrefixForParsing === undefined) return number
  const match = plan.nationalPrefixForParsing.exec(number)
  if (match === null) return number
  const groups = match.length - 1
  const captured = groups > 0 && match[groups]
  if (plan.nationalPrefixTransformRule !== undefined && captured) {
    return number.replace(plan.nationalPrefixForParsing, plan.nationalPrefixTransformRule)
  }
  return number.slice(match[0].length)
}

/**
 * getCountryByCallingCode: which of the regions sharing a calling code a national number is in.
 * Regions with leading digits are told by those alone; the others by their number patterns.
 */
const regionByNationalNumber = (callingCode: string, nationalNumber: string): NumberingPlan | undefined => {
  const regions = regionsOf(callingCode)
  if (!regions) return undefined
  if (regions.length === 1) return regions[0]
  for (const plan of regions) {
    if (plan.leadingDigits) {
      if (nationalNumber !== "" && nationalNumber.search(plan.leadingDigits) === 0) return plan
    } else if (plan.nationalNumber.test(nationalNumber) && matchesAnyType(nationalNumber, plan)) {
      return plan
    }
  }
  return undefined
}

/** isValidNumber: the national pattern, and a number type's pattern when the plan lists types. */
const isValid = (nationalNumber: string, plan: NumberingPlan) =>
  plan.nationalNumber.test(nationalNumber) && (plan.types === undefined || matchesAnyType(nationalNumber, plan))

/** getNumberType found some type (isNumberTypeEqualTo for each). */
const matchesAnyType = (nationalNumber: string, plan: NumberingPlan) => {
  for (const type of plan.types ?? []) {
    if (type.possibleLengths && !type.possibleLengths.includes(nationalNumber.length)) continue
    if (type.pattern.test(nationalNumber)) return true
  }
  return false
}

/** checkNumberLength */
const numberLength = (nationalNumber: string, plan: NumberingPlan) => {
  const possible = plan.possibleLengths
  if (!possible) return "IS_POSSIBLE"
  const length = nationalNumber.length
  const shortest = possible[0]!
  if (shortest === length) return "IS_POSSIBLE"
  if (shortest > length) return "TOO_SHORT"
  if (possible[possible.length - 1]! < length) return "TOO_LONG"
  return possible.indexOf(length, 1) >= 0 ? "IS_POSSIBLE" : "INVALID_LENGTH"
}
