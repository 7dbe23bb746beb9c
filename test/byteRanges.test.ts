import { describe, expect, it } from "vitest"
import { byteRangeOf } from "../src/storage/byteRanges.ts"

describe("Range headers against a 1000-byte file (RFC 9110 §14.1.2)", () => {
  it.each<[string | undefined, ReturnType<typeof byteRangeOf>]>([
    [undefined, { _tag: "Whole" }],
    ["bytes=0-99", { _tag: "Partial", start: 0, end: 99 }],
    ["bytes=900-", { _tag: "Partial", start: 900, end: 999 }],
    ["bytes=900-5000", { _tag: "Partial", start: 900, end: 999 }],
    ["bytes=-100", { _tag: "Partial", start: 900, end: 999 }],
    ["bytes=-5000", { _tag: "Partial", start: 0, end: 999 }],
    ["bytes=999-999", { _tag: "Partial", start: 999, end: 999 }],
    ["bytes=1000-", { _tag: "Unsatisfiable" }],
    ["bytes=1000-1200", { _tag: "Unsatisfiable" }],
    ["bytes=-0", { _tag: "Unsatisfiable" }],
    ["bytes=100-50", { _tag: "Whole" }],
    ["bytes=0-9,20-29", { _tag: "Whole" }],
    ["items=0-9", { _tag: "Whole" }],
    ["bytes=-", { _tag: "Whole" }],
    ["bytes=99999999999999999999-", { _tag: "Whole" }]
  ])("%s", (header, answer) => {
    expect(byteRangeOf(header, 1000)).toEqual(answer)
  })

  it("cannot satisfy any range of an empty file", () => {
    expect(byteRangeOf("bytes=0-", 0)).toEqual({ _tag: "Unsatisfiable" })
    expect(byteRangeOf("bytes=-10", 0)).toEqual({ _tag: "Unsatisfiable" })
  })
})
