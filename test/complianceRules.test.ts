import { describe, expect, it } from "@effect/vitest"
import { Clock, Effect, TestClock } from "effect"
import {
  type CallingHours,
  countryZonesOf,
  nextOpening,
  openInAll,
  recipientZones,
  zoneKey
} from "../src/compliance/mod.ts"

const hours: CallingHours = { enabled: true, start: "09:00", end: "20:00", days: [1, 2, 3, 4, 5, 6, 7], holidays: [] }
const at = (iso: string) => Date.parse(iso)

describe("a recipient's time zones", () => {
  it.each([
    ["+12125550123", undefined, ["America/New_York"]],
    ["+13125550123", undefined, ["America/Chicago"]],
    ["+13035550123", undefined, ["America/Denver"]],
    ["+16025550123", undefined, ["America/Phoenix"]],
    ["+14155550123", undefined, ["America/Los_Angeles"]],
    ["+19075551234", undefined, ["America/Adak", "America/Anchorage"]],
    ["+18085551234", undefined, ["Pacific/Honolulu"]],
    // The Florida panhandle is split between Eastern and Central time.
    ["+18505551234", undefined, ["America/Chicago", "America/New_York"]],
    ["+16045551234", undefined, ["America/Vancouver"]],
    ["+14165551234", undefined, ["America/Toronto"]],
    ["+17875551234", undefined, ["America/Puerto_Rico"]],
    ["+61293744000", undefined, ["Australia/Sydney"]],
    ["+61892221234", undefined, ["Australia/Perth"]],
    ["+5511912345678", undefined, ["America/Sao_Paulo"]],
    ["+5592912345678", undefined, ["America/Manaus"]],
    ["+526641234567", undefined, ["America/Tijuana"]],
    ["+525512345678", undefined, ["America/Mexico_City"]],
    ["+74951234567", undefined, ["Europe/Moscow"]],
    ["+73831234567", undefined, ["Asia/Novosibirsk"]],
    ["+442079460000", undefined, ["Europe/London"]],
    // A zone given with the contact wins over the number; one that is not an IANA zone is ignored.
    ["+12125550123", "Europe/Paris", ["Europe/Paris"]],
    ["+12125550123", "Mars/Olympus", ["America/New_York"]]
  ])("%s (given zone %s) is in %j", (number, given, zones) => {
    expect([...recipientZones(number, given)].sort()).toEqual(zones)
  })

  it("takes every zone of the country when the number does not tell (mobiles in Australia and Russia)", () => {
    expect(recipientZones("+61412345678")).toEqual(countryZonesOf("AU"))
    expect(recipientZones("+79161234567")).toEqual(countryZonesOf("RU"))
    expect(recipientZones("+79161234567").length).toBeGreaterThan(10)
  })

  it("stores zones as one sorted key", () => {
    expect(zoneKey(["America/New_York", "America/Chicago"])).toBe("America/Chicago America/New_York")
    expect(zoneKey([])).toBeNull()
  })
})

describe("calling hours in the recipient's local time", () => {
  it.each([
    // New York on the Saturday before DST starts (EST, UTC-5) and on the Sunday after (EDT, UTC-4).
    ["2026-03-07T13:30:00Z", ["America/New_York"], false],
    ["2026-03-07T14:00:00Z", ["America/New_York"], true],
    ["2026-03-08T13:30:00Z", ["America/New_York"], true],
    ["2026-03-08T23:59:00Z", ["America/New_York"], true],
    ["2026-03-09T00:00:00Z", ["America/New_York"], false],
    // London the day DST ends: 08:30 UTC is 09:30 BST on Saturday, 08:30 GMT on Sunday.
    ["2026-10-24T08:30:00Z", ["Europe/London"], true],
    ["2026-10-25T08:30:00Z", ["Europe/London"], false],
    // Sydney's DST starts on 4 October 2026: 22:30 UTC is 08:30 AEST, then 09:30 AEDT.
    ["2026-10-02T22:30:00Z", ["Australia/Sydney"], false],
    ["2026-10-04T22:30:00Z", ["Australia/Sydney"], true],
    // Several candidate zones: open only where every one of them is.
    ["2026-01-14T14:30:00Z", ["America/New_York", "America/Chicago"], false],
    ["2026-01-14T15:00:00Z", ["America/New_York", "America/Chicago"], true],
    ["2026-01-15T01:30:00Z", ["America/New_York", "America/Chicago"], false],
    ["2026-01-15T01:30:00Z", ["America/Chicago"], true],
    // Half-hour and 45-minute offsets.
    ["2026-01-14T03:15:00Z", ["Asia/Kathmandu"], true],
    ["2026-01-14T03:14:00Z", ["Asia/Kathmandu"], false]
  ])("at %s in %j: open = %s", (instant, zones, open) => {
    expect(openInAll(hours, zones, at(instant))).toBe(open)
  })

  it("keeps to the days of the week and the holidays, in local dates", () => {
    const weekdays = { ...hours, days: [1, 2, 3, 4, 5], holidays: ["2026-12-25"] }
    // Saturday 10:00 in New York.
    expect(openInAll(weekdays, ["America/New_York"], at("2026-03-07T15:00:00Z"))).toBe(false)
    // Christmas (a Friday) in New York, while it is already the 26th in UTC.
    expect(openInAll(weekdays, ["America/New_York"], at("2026-12-26T00:30:00Z"))).toBe(false)
    expect(openInAll(weekdays, ["America/New_York"], at("2026-12-24T15:00:00Z"))).toBe(true)
    // In Tokyo it is the 26th: not a holiday there, but Saturday.
    expect(openInAll(weekdays, ["Asia/Tokyo"], at("2026-12-25T00:30:00Z"))).toBe(false)
    expect(openInAll(weekdays, ["Asia/Tokyo"], at("2026-12-24T00:30:00Z"))).toBe(true)
  })

  it("is always open when the policy is off, whatever the zones", () => {
    expect(openInAll({ ...hours, enabled: false }, ["America/New_York"], at("2026-03-07T03:00:00Z"))).toBe(true)
  })

  it.each([
    // Before opening: that morning's opening.
    ["2026-03-07T12:00:00Z", ["America/New_York"], "2026-03-07T14:00:00.000Z"],
    // Open: now.
    ["2026-03-07T23:00:00Z", ["America/New_York"], "2026-03-07T23:00:00.000Z"],
    // After closing on the eve of DST: 09:00 EDT the next morning, an hour earlier in UTC.
    ["2026-03-08T01:30:00Z", ["America/New_York"], "2026-03-08T13:00:00.000Z"],
    // Two zones: when the later of them opens.
    ["2026-01-14T14:30:00Z", ["America/New_York", "America/Chicago"], "2026-01-14T15:00:00.000Z"],
    // After closing in New York (20:30) though Chicago is open: both open next at 09:00 Central.
    ["2026-01-15T01:30:00Z", ["America/New_York", "America/Chicago"], "2026-01-15T15:00:00.000Z"],
    // Every Russian zone (a mobile): only where Kaliningrad has opened and Kamchatka has not closed.
    ["2026-01-14T00:00:00Z", "RU", "2026-01-14T07:00:00.000Z"]
  ])("from %s in %j the next opening is %s", (instant, zones, expected) => {
    const candidates = typeof zones === "string" ? countryZonesOf(zones) : zones
    const opening = nextOpening(hours, candidates, at(instant))
    expect(opening === undefined ? undefined : new Date(opening).toISOString()).toBe(expected)
  })

  it("skips days off and holidays to the next allowed morning", () => {
    const weekdays = { ...hours, days: [1, 2, 3, 4, 5], holidays: ["2026-12-28"] }
    // Friday 25 December 21:00 in New York: Saturday and Sunday are off, Monday the 28th a holiday.
    const opening = nextOpening(weekdays, ["America/New_York"], at("2026-12-26T02:00:00Z"))
    expect(new Date(opening!).toISOString()).toBe("2026-12-29T14:00:00.000Z")
  })

  it.effect("answers for the clock's instant (TestClock)", () =>
    Effect.gen(function*() {
      yield* TestClock.setTime(at("2026-07-01T12:59:00Z"))
      const before = yield* Clock.currentTimeMillis
      expect(openInAll(hours, ["America/New_York"], before)).toBe(false)
      yield* TestClock.adjust("1 minute")
      expect(openInAll(hours, ["America/New_York"], yield* Clock.currentTimeMillis)).toBe(true)
    }))
})
