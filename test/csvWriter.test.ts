import { describe, expect, it } from "vitest"
import { csvCell, csvLine } from "../src/csv/csvWriter.ts"

describe("the CSV cell policy every export shares", () => {
  it.each([
    ["=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\""],
    ["+15551234", "'+15551234"],
    ["-2+3+cmd|' /C calc'!A0", "'-2+3+cmd|' /C calc'!A0"],
    ["+1+HYPERLINK(\"http://evil\")", "\"'+1+HYPERLINK(\"\"http://evil\"\")\""],
    ["-2+3", "'-2+3"],
    ["@SUM(A1)", "'@SUM(A1)"],
    ["\tcmd", "'\tcmd"],
    ["\rcmd", "\"'\rcmd\""],
    ["  =1+1", "'  =1+1"],
    ["\uFF1D1+1", "'\uFF1D1+1"],
    ["plain", "plain"],
    ["a-b", "a-b"],
    ["a,b", "\"a,b\""]
  ])("writes %j as %s", (value, expected) => {
    expect(csvCell(value)).toBe(expected)
  })

  it("writes our own numbers as numbers, even negative ones, dates as ISO text and nulls as empty cells", () => {
    expect(csvLine([1, -2, null, undefined, new Date("2024-05-01T09:00:00Z"), "x"])).toBe(
      "1,-2,,,2024-05-01T09:00:00.000Z,x\r\n"
    )
  })
})
