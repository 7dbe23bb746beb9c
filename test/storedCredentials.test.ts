import { describe, expect, it } from "vitest"
import { carryCredential, comparableUrl } from "../src/domain/storedCredentials.ts"

const openai = { provider: "openai", base_url: null }
const local = { provider: "openai", base_url: "http://127.0.0.1:11434/v1" }

describe("the rule for stored credentials", () => {
  it("replaces a stored credential with one sent in clear, wherever it goes", () => {
    expect(carryCredential("sk-new", "sealed", openai, local)).toEqual({ _tag: "Replaced", value: "sk-new" })
  })

  it("keeps a stored credential omitted or sent back masked only while the endpoint is unchanged", () => {
    expect(carryCredential(undefined, "sealed", openai, { ...openai })).toEqual({ _tag: "Kept", stored: "sealed" })
    expect(
      carryCredential("****WXYZ", "sealed", local, { ...local, base_url: comparableUrl("http://127.0.0.1:11434/v1/") })
    ).toEqual({ _tag: "Kept", stored: "sealed" })
    expect(carryCredential(undefined, "sealed", openai, local)).toEqual({ _tag: "Withheld" })
    expect(carryCredential("****WXYZ", "sealed", openai, local)).toEqual({ _tag: "MaskedOnly" })
    expect(carryCredential("****WXYZ", "sealed", { ...openai, account: "AC1" }, { ...openai, account: "AC2" })).toEqual(
      { _tag: "MaskedOnly" }
    )
  })

  it("has nothing to keep where nothing is stored", () => {
    expect(carryCredential(undefined, null, openai, openai)).toEqual({ _tag: "Absent" })
    expect(carryCredential("****WXYZ", null, openai, openai)).toEqual({ _tag: "MaskedOnly" })
    expect(carryCredential(undefined, "sealed", null, openai)).toEqual({ _tag: "Withheld" })
  })

  it("compares base URLs as URLs", () => {
    expect(comparableUrl("HTTPS://API.example.com/v1/")).toBe("https://api.example.com/v1")
    expect(comparableUrl(null)).toBeNull()
  })
})
