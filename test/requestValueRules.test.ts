import { describe, expect, it } from "vitest"
import { problemMessage } from "../http/problemMessage.ts"
import { jsonValueProblems, unstorableNumberReason, unstorableTextReason } from "../src/domain/storableValues.ts"

describe("what text, numbers and JSON a request may carry", () => {
  it("refuses NUL characters and unpaired surrogates, and keeps paired ones (emoji)", () => {
    expect(unstorableTextReason("plain text, accents é and emoji 🚀")).toBeUndefined()
    expect(unstorableTextReason("a\u0000b")).toMatch(/NUL/)
    expect(unstorableTextReason("lone high \ud83d")).toMatch(/surrogate/)
    expect(unstorableTextReason("\ude80 lone low")).toMatch(/surrogate/)
    expect(unstorableTextReason("reversed \ude80\ud83d pair")).toMatch(/surrogate/)
  })

  it("takes numbers a bigint holds exactly and refuses the rest", () => {
    expect(unstorableNumberReason(Number.MAX_SAFE_INTEGER)).toBeUndefined()
    expect(unstorableNumberReason(-Number.MAX_SAFE_INTEGER)).toBeUndefined()
    expect(unstorableNumberReason(0.25)).toBeUndefined()
    expect(unstorableNumberReason(2 ** 53)).toBeDefined()
    expect(unstorableNumberReason(JSON.parse("1e400"))).toBeDefined()
  })

  it("names where each problem is, keys included, and reports the first twenty at most", () => {
    expect(jsonValueProblems({ a: [1, { "b\u0000": "ok", c: "x\u0000" }] })).toEqual([
      { path: ["a", 1], reason: "Keys: Text must not contain NUL (\\u0000) characters" },
      { path: ["a", 1, "c"], reason: "Text must not contain NUL (\\u0000) characters" }
    ])
    expect(jsonValueProblems(Array(500).fill("\u0000"))).toHaveLength(20)
  })

  it("stops at 64 levels however deep the input goes, and at arrays over 1000 items", () => {
    const deep = JSON.parse(`${"[".repeat(200_000)}${"]".repeat(200_000)}`)
    expect(jsonValueProblems(deep)).toEqual([
      { path: Array(64).fill(0), reason: "JSON must not be nested more than 64 levels deep" }
    ])
    expect(jsonValueProblems(JSON.parse(`${"[".repeat(64)}${"]".repeat(64)}`))).toEqual([])
    expect(jsonValueProblems({ list: Array(1001).fill(0) })).toEqual([{
      path: ["list"],
      reason: "Arrays must not hold more than 1000 items"
    }])
    expect(jsonValueProblems({ list: Array(1000).fill(0) })).toEqual([])
  })
})

describe("what a 422 message quotes back", () => {
  it("keeps messages without a quoted value as they are", () => {
    expect(problemMessage(["body", "email"], "Not a valid email address")).toBe("Not a valid email address")
  })

  it("cuts a quoted scalar to a short excerpt, without splitting a surrogate pair", () => {
    expect(
      problemMessage(["body", "name"], `Expected a string at most 5 character(s) long, actual "${"🚀".repeat(40)}"`)
    )
      .toBe(`Expected a string at most 5 character(s) long, actual "${"🚀".repeat(15)}…"`)
    expect(problemMessage(["body", "count"], "Expected an integer, actual 1.5")).toBe("Expected an integer, actual 1.5")
  })

  it("never quotes a credential field, an object or array, or the whole body", () => {
    for (
      const field of ["password", "auth_token", "api_key", "api_secret", "private_key", "signature_secret", "token"]
    ) {
      expect(
        problemMessage(["body", "config", field], "Expected a string at most 8192 character(s) long, actual \"s3cr3t\"")
      )
        .toBe("Expected a string at most 8192 character(s) long")
    }
    expect(problemMessage(["body", "email"], "Expected string, actual {\"password\":\"s3cr3t\"}")).toBe(
      "Expected string"
    )
    expect(problemMessage(["body"], "Expected LoginRequest, actual \"password=s3cr3t\"")).toBe("Expected LoginRequest")
  })
})
