import {
  type CountryCode,
  getCountries,
  getCountryCallingCode,
  parsePhoneNumberFromString
} from "libphonenumber-js/max"
import examples from "libphonenumber-js/mobile/examples"
import { describe, expect, it } from "vitest"
import { toE164 } from "../src/phone/e164.ts"

/** What contacts were normalized with before: libphonenumber-js as documented. */
const reference = (raw: string, region: CountryCode | undefined): string | undefined => {
  const text = raw.trim()
  if (text === "") return undefined
  if (!text.startsWith("+") && region === undefined) return undefined
  const parsed = region ? parsePhoneNumberFromString(text, region) : parsePhoneNumberFromString(text)
  return parsed && parsed.isValid() ? parsed.number : undefined
}

/** Seeded, so a mismatch reproduces with the same corpus. */
const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const countries = getCountries()
const iddPrefixes = ["00", "011", "010", "810", "0011", "001", "009", "119", "8~10"]

/**
 * Numbers as people type them into a spreadsheet: real mobile examples of every region with their
 * last digits changed (mostly valid), random digit strings (mostly not), each written with or
 * without `+`, national or IDD prefix, spaces, dashes, dots, slashes, brackets, and some text the
 * library has to handle itself (letters, extensions, other digits, `tel:` URIs).
 */
const corpus = (size: number, seed: number): Array<readonly [string, CountryCode | undefined]> => {
  const next = random(seed)
  const pick = <A>(items: ReadonlyArray<A>): A => items[Math.floor(next() * items.length)]!
  const digits = (count: number) => Array.from({ length: count }, () => Math.floor(next() * 10)).join("")
  const cases: Array<readonly [string, CountryCode | undefined]> = []
  while (cases.length < size) {
    const country = pick(countries)
    const callingCode = getCountryCallingCode(country)
    const example = (examples as Record<string, string>)[country] ?? digits(9)
    const kept = Math.max(0, example.length - 1 - Math.floor(next() * 5))
    const national = next() < 0.75
      ? example.slice(0, kept) + digits(example.length - kept + (next() < 0.1 ? pick([-2, -1, 1, 2]) : 0))
      : digits(1 + Math.floor(next() * 16))
    const shape = next()
    let number = shape < 0.45
      ? `+${callingCode}${national}`
      : shape < 0.65
      ? national
      : shape < 0.75
      ? `0${national}`
      : shape < 0.82
      ? `${callingCode}${national}`
      : shape < 0.9
      ? `${pick(iddPrefixes)}${callingCode}${national}`
      : shape < 0.95
      ? `+${digits(1 + Math.floor(next() * 3))}${national}`
      : digits(Math.floor(next() * 5))
    number = [...number].map((char, index) => {
      const r = next()
      if (index === 0 || r > 0.25) return char
      return pick([" ", "-", ".", "/", " (", ") ", "(", ")", "  ", " - "]) + char
    }).join("")
    const decoration = next()
    if (decoration < 0.05) number = `(${number})`
    else if (decoration < 0.08) number = `${number} ext. ${digits(3)}`
    else if (decoration < 0.1) number = `${number} x${digits(2)}`
    else if (decoration < 0.12) number = `tel:${number}`
    else if (decoration < 0.14) number = `${number}${pick(["#", ";", ",,12", "a", "+", "-"])}`
    else if (decoration < 0.16) number = `${pick(["Tel ", "+", "++", "'", "=", "#", "a"])}${number}`
    else if (decoration < 0.17) number = number.replace(/[0-9]/, (digit) => String.fromCharCode(0xff10 + Number(digit)))
    else if (decoration < 0.18) number = `1-800-FLOWERS`
    else if (decoration < 0.19) number = ` ${number} `
    else if (decoration < 0.2) number = number.slice(0, Math.floor(next() * number.length))
    const region = next() < 0.3 ? undefined : next() < 0.6 ? country : pick(countries)
    cases.push([number, region])
  }
  return cases
}

describe("E.164 normalization", () => {
  it("gives libphonenumber-js's answer (accept or reject, and the same E.164 number) on 100,000 generated numbers", () => {
    let accepted = 0
    const mismatches: Array<string> = []
    for (const [number, region] of corpus(100_000, 20261122)) {
      const expected = reference(number, region)
      const actual = toE164(number, region)
      if (actual !== expected) {
        mismatches.push(`${JSON.stringify(number)} in ${region}: ${actual} (library: ${expected})`)
      }
      if (expected !== undefined) accepted++
    }
    expect(mismatches.slice(0, 20)).toEqual([])
    // The corpus is only a proof if it holds plenty of both answers.
    expect(accepted).toBeGreaterThan(25_000)
    expect(100_000 - accepted).toBeGreaterThan(25_000)
  })

  it.each(
    [
      ["+1 (415) 555-2671", undefined, "+14155552671"],
      ["(415) 555-2671", "US", "+14155552671"],
      ["1 415 555 2671", "US", "+14155552671"],
      ["011 44 20 7946 0958", "US", "+442079460958"],
      ["020 7946 0958", "GB", "+442079460958"],
      ["+44 (0)20 7946 0958", undefined, "+442079460958"],
      ["0 11 15-2345-6789", "AR", "+5491123456789"],
      ["+1 613 555 0143", undefined, "+16135550143"],
      ["+1 415 555 2671 ext. 12", undefined, "+14155552671"],
      ["+800 1234 5678", undefined, "+80012345678"],
      ["415 555 2671", undefined, undefined],
      ["+1 415 555", undefined, undefined],
      ["+1 415 555 2671 +", undefined, "+14155552671"],
      ["+1 415+555 2671", undefined, undefined]
    ] as const
  )("%j in %s is %s", (number, region, e164) => {
    expect(reference(number, region)).toBe(e164)
    expect(toE164(number, region)).toBe(e164)
  })
})
