import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { channelOfMode } from "../src/usage/channels.ts"
import { denseDailySeries, localDate } from "../src/usage/dailySeries.ts"
import { checkedWindow, createdWindow, parseDateBound } from "../src/usage/dates.ts"
import { parseUsageFilters, phoneSearchText } from "../src/usage/filters.ts"
import { pageOffset, totalPages } from "../src/usage/pagination.ts"
import { escapeLike } from "../src/usage/query.ts"

const filters = (value: unknown) => parseUsageFilters(JSON.stringify(value))
const bound = (raw: string) => Either.getOrThrow(parseDateBound(raw))

describe("usage filters", () => {
  it.each([
    ["runId", "number", { value: 7 }, { _tag: "RunId", id: 7 }],
    ["runId", "number", { value: "7" }, { _tag: "RunId", id: 7 }],
    ["workflowId", "number", { value: 3 }, { _tag: "WorkflowId", id: 3 }],
    ["campaignId", "number", { value: 9 }, { _tag: "CampaignId", id: 9 }],
    ["callerNumber", "text", { value: "+1 (415) 555-01" }, { _tag: "CallerNumber", contains: "+141555501" }],
    ["calledNumber", "text", { value: "sip:agent" }, { _tag: "CalledNumber", contains: "sip:agent" }],
    ["dispositionCode", "multiSelect", { codes: ["a", "b", "a"] }, { _tag: "Disposition", codes: ["a", "b"] }],
    ["duration", "numberRange", { min: 1.5, max: 9.5 }, { _tag: "Duration", min: 2, max: 9 }],
    ["duration", "numberRange", { min: 10 }, { _tag: "Duration", min: 10, max: null }],
    ["callDirection", "radio", { status: "Inbound" }, { _tag: "Direction", direction: "inbound" }],
    ["callChannel", "radio", { status: "web" }, { _tag: "Channel", channel: "web" }],
    ["testRuns", "radio", { status: "only" }, { _tag: "TestRuns", only: true }],
    ["testRuns", "radio", { status: "Exclude" }, { _tag: "TestRuns", only: false }]
  ])("reads %s/%s %j", (attribute, type, value, expected) => {
    expect(filters([{ attribute, type, value }])).toEqual(Either.right([expected]))
  })

  it.each([
    ["an unknown attribute", { attribute: "dateRange", type: "dateRange", value: {} }],
    ["an unsupported type", { attribute: "runId", type: "text", value: { value: "x" } }],
    ["a prototype name", { attribute: "constructor", type: "number", value: { value: 1 } }],
    ["a direction outside inbound/outbound", { attribute: "callDirection", type: "radio", value: { status: "all" } }],
    ["an unknown channel", { attribute: "callChannel", type: "radio", value: { status: "fax" } }],
    ["test runs neither only nor excluded", { attribute: "testRuns", type: "radio", value: { status: "all" } }],
    ["an empty disposition list", { attribute: "dispositionCode", type: "multiSelect", value: { codes: [] } }],
    ["an empty number search", { attribute: "callerNumber", type: "text", value: { value: "  " } }],
    ["an open duration range", { attribute: "duration", type: "numberRange", value: { min: null, max: null } }]
  ])("drops %s (it matches every run)", (_, filter) => {
    expect(filters([filter])).toEqual(Either.right([]))
  })

  it.each([
    ["text that is not JSON", "[{"],
    ["a JSON object", "{\"attribute\":\"runId\"}"],
    ["an entry that is not an object", "[1]"],
    ["an entry without a type", "[{\"attribute\":\"runId\",\"value\":{\"value\":1}}]"],
    ["a known filter without a value object", "[{\"attribute\":\"runId\",\"type\":\"number\",\"value\":5}]"],
    ["a fractional id", "[{\"attribute\":\"runId\",\"type\":\"number\",\"value\":{\"value\":1.5}}]"],
    [
      "codes that are not strings",
      "[{\"attribute\":\"dispositionCode\",\"type\":\"multiSelect\",\"value\":{\"codes\":[1]}}]"
    ],
    [
      "a range with min above max",
      "[{\"attribute\":\"duration\",\"type\":\"numberRange\",\"value\":{\"min\":9,\"max\":1}}]"
    ],
    [
      "a range bound that is not a number",
      "[{\"attribute\":\"duration\",\"type\":\"numberRange\",\"value\":{\"min\":\"soon\"}}]"
    ]
  ])("refuses %s", (_, raw) => {
    expect(Either.isLeft(parseUsageFilters(raw))).toBe(true)
  })

  it("treats an empty parameter as no filters", () => {
    expect(parseUsageFilters("")).toEqual(Either.right([]))
    expect(parseUsageFilters("[]")).toEqual(Either.right([]))
  })

  it("compares pasted phone numbers by their digits but leaves other text alone", () => {
    expect(phoneSearchText(" 415.555 01 ")).toBe("41555501")
    expect(phoneSearchText("+44 (20) 7123")).toBe("+44207123")
    expect(phoneSearchText("client:alice")).toBe("client:alice")
  })

  it("escapes LIKE wildcards so a search matches the text itself", () => {
    expect(escapeLike("50%_\\")).toBe("50\\%\\_\\\\")
  })
})

describe("usage dates", () => {
  it.each([
    ["2024-05-01T10:20:30Z", "2024-05-01T10:20:30.000Z", 1000],
    ["2024-05-01T10:20:30", "2024-05-01T10:20:30.000Z", 1000],
    ["2024-05-01T10:20:30.5Z", "2024-05-01T10:20:30.500Z", 100],
    ["2024-05-01T10:20:30.123456Z", "2024-05-01T10:20:30.123Z", 1],
    ["2024-05-01T12:20:30+02:00", "2024-05-01T10:20:30.000Z", 1000],
    ["2024-05-01T10:20", "2024-05-01T10:20:00.000Z", 60_000],
    ["2024-05-01", "2024-05-01T00:00:00.000Z", 86_400_000],
    ["2024-02-29T00:00:00Z", "2024-02-29T00:00:00.000Z", 1000]
  ])("reads %s", (raw, instant, spanMs) => {
    const parsed = bound(raw)
    expect(parsed.instant.toISOString()).toBe(instant)
    expect(parsed.spanMs).toBe(spanMs)
  })

  it.each([
    "yesterday",
    "2024-13-01T00:00:00Z",
    "2023-02-29",
    "2024-05-01T24:00:00Z",
    "2024-05-01T10:61Z",
    "1714557600"
  ])(
    "refuses %s",
    (raw) => expect(Either.isLeft(parseDateBound(raw))).toBe(true)
  )

  it.each(["0000-01-01", "0000-12-31T23:59:59.999Z", "0001-01-01T00:00:00+00:01", "0001-01-01T01:00:00+14:00"])(
    "refuses %s, before the first instant the database stores",
    (raw) => expect(parseDateBound(raw)).toEqual(Either.left("must be between 0001-01-01 and 9999-12-31 (UTC)"))
  )

  it("reads the first and last storable days, and leaves a window ending on the last one open", () => {
    expect(bound("0001-01-01").instant.toISOString()).toBe("0001-01-01T00:00:00.000Z")
    expect(bound("9999-12-31T23:59:59.999Z").instant.toISOString()).toBe("9999-12-31T23:59:59.999Z")
    expect(createdWindow(bound("0001-01-01"), bound("9999-12-31"))).toEqual({
      from: new Date("0001-01-01T00:00:00Z"),
      before: null
    })
    expect(createdWindow(undefined, bound("9999-12-30")).before?.toISOString()).toBe("9999-12-31T00:00:00.000Z")
  })

  it("makes the end inclusive of everything its precision names", () => {
    expect(createdWindow(bound("2024-05-01"), bound("2024-05-31")).before?.toISOString()).toBe(
      "2024-06-01T00:00:00.000Z"
    )
    expect(createdWindow(undefined, bound("2024-05-31T23:59:59Z")).before?.toISOString()).toBe(
      "2024-06-01T00:00:00.000Z"
    )
    expect(createdWindow(undefined, bound("2024-05-31T23:59:59.250Z")).before?.toISOString()).toBe(
      "2024-05-31T23:59:59.251Z"
    )
  })

  it("refuses an end before the start but accepts equal bounds", () => {
    expect(Either.isLeft(checkedWindow(bound("2024-05-02"), bound("2024-05-01")))).toBe(true)
    expect(Either.isRight(checkedWindow(bound("2024-05-01T10:00:00Z"), bound("2024-05-01T10:00:00Z")))).toBe(true)
  })
})

describe("usage paging", () => {
  it("computes offsets and page counts", () => {
    expect(pageOffset(1, 50)).toBe(0)
    expect(pageOffset(1000, 50)).toBe(49_950)
    expect(totalPages(0, 50)).toBe(0)
    expect(totalPages(50, 50)).toBe(1)
    expect(totalPages(51, 50)).toBe(2)
  })
})

describe("channels", () => {
  it.each([["twilio", "telephony"], ["vonage", "telephony"], ["telnyx", "telephony"], ["plivo", "telephony"], [
    "ari",
    "telephony"
  ], [
    "webrtc",
    "web"
  ], ["textchat", "chat"]])("groups %s under %s", (mode, channel) => {
    expect(channelOfMode(mode)).toBe(channel)
  })
})

describe("daily series", () => {
  it("places an instant on the calendar day of the time zone", () => {
    expect(localDate(new Date("2024-05-02T03:30:00Z"), "America/New_York")).toBe("2024-05-01")
    expect(localDate(new Date("2024-05-02T03:30:00Z"), "Asia/Tokyo")).toBe("2024-05-02")
  })

  it("fills days without runs with zeros across the requested window", () => {
    const window = createdWindow(bound("2024-05-01T04:00:00Z"), bound("2024-05-04T03:59:59Z"))
    const series = Either.getOrThrow(denseDailySeries(
      [{ date: "2024-05-03", runs: 2, duration_seconds: 90, service_tokens: 10 }],
      window,
      "America/New_York"
    ))
    expect(series.map((day) => [day.date, day.runs, day.minutes])).toEqual([
      ["2024-05-01", 0, 0],
      ["2024-05-02", 0, 0],
      ["2024-05-03", 2, 1.5]
    ])
  })

  it("refuses a window longer than ten years", () => {
    expect(Either.isLeft(denseDailySeries([], createdWindow(bound("2000-01-01"), bound("2024-01-01")), "UTC"))).toBe(
      true
    )
  })
})
