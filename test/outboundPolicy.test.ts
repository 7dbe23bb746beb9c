import { ConfigProvider, Effect, Either } from "effect"
import { describe, expect, it } from "vitest"
import { classifyAddress } from "../src/outbound/addressRanges.ts"
import { baseUrlProblem, endpointUnder } from "../src/outbound/baseUrls.ts"
import {
  addressRefusal,
  defaultOutboundAllow,
  outboundPolicyConfig,
  parseOutboundAllow
} from "../src/outbound/outboundPolicy.ts"

const policy = (text: string) => Either.getOrThrow(parseOutboundAllow(text))

describe("outbound address ranges", () => {
  it("never allows link-local, metadata, unspecified or multicast addresses, however they are written", () => {
    for (
      const address of [
        "169.254.169.254",
        "169.254.0.1",
        "100.100.100.200",
        "0.0.0.0",
        "224.0.0.1",
        "255.255.255.255",
        "fe80::1",
        "fd00:ec2::254",
        "::",
        "::ffff:169.254.169.254",
        "[::ffff:a9fe:a9fe]",
        "64:ff9b::a9fe:a9fe",
        "2002:a9fe:a9fe::1"
      ]
    ) {
      expect(classifyAddress(address)?.class, address).toBe("never")
    }
  })

  it("tells loopback, private and public addresses apart", () => {
    expect(classifyAddress("127.0.0.2")?.class).toBe("loopback")
    expect(classifyAddress("::1")?.class).toBe("loopback")
    expect(classifyAddress("::ffff:127.0.0.1")?.class).toBe("loopback")
    for (const address of ["10.1.2.3", "172.20.0.5", "192.168.1.1", "100.64.0.7", "fd12:3456::1"]) {
      expect(classifyAddress(address)?.class, address).toBe("private")
    }
    for (const address of ["8.8.8.8", "52.94.236.248", "2606:4700::1111"]) {
      expect(classifyAddress(address)?.class, address).toBe("public")
    }
    expect(classifyAddress("api.openai.com")).toBeNull()
  })
})

describe("TALKGRAPH_OUTBOUND_ALLOW", () => {
  it("by default lets a self-hosted service reach local models but not local carriers; with sign-up open, nothing internal", () => {
    const selfHosted = policy(defaultOutboundAllow(false))
    expect(addressRefusal(selfHosted, "model", "127.0.0.1")).toBeNull()
    expect(addressRefusal(selfHosted, "model", "192.168.1.20")).toBeNull()
    expect(addressRefusal(selfHosted, "carrier", "127.0.0.1")).toMatch(
      /loopback address .* TALKGRAPH_OUTBOUND_ALLOW does not allow for carrier endpoints/
    )
    const open = policy(defaultOutboundAllow(true))
    expect(addressRefusal(open, "model", "127.0.0.1")).toMatch(/does not allow/)
    expect(addressRefusal(open, "model", "8.8.8.8")).toBeNull()
  })

  it("allows ranges per kind of endpoint, and never the ranges that are never allowed", () => {
    const custom = policy("carriers:loopback, models:10.20.0.0/16, fd12::/16")
    expect(addressRefusal(custom, "carrier", "127.0.0.1")).toBeNull()
    expect(addressRefusal(custom, "model", "127.0.0.1")).not.toBeNull()
    expect(addressRefusal(custom, "model", "10.20.3.4")).toBeNull()
    expect(addressRefusal(custom, "model", "::ffff:10.20.3.4")).toBeNull()
    expect(addressRefusal(custom, "carrier", "10.20.3.4")).not.toBeNull()
    expect(addressRefusal(custom, "carrier", "fd12::9")).toBeNull()
    const everything = policy("loopback,private,0.0.0.0/0")
    expect(addressRefusal(everything, "model", "169.254.169.254")).toMatch(/never sends requests there/)
  })

  it("is read from the environment, its default following TALKGRAPH_SIGNUP, and a bad value names the variable", async () => {
    const read = (env: Record<string, string>) =>
      Effect.runPromise(
        Effect.either(
          Effect.withConfigProvider(outboundPolicyConfig, ConfigProvider.fromMap(new Map(Object.entries(env))))
        )
      )
    const closed = Either.getOrThrow(await read({}))
    expect(addressRefusal(closed, "model", "127.0.0.1")).toBeNull()
    const open = Either.getOrThrow(await read({ TALKGRAPH_SIGNUP: "true" }))
    expect(addressRefusal(open, "model", "127.0.0.1")).not.toBeNull()
    const bad = await read({ TALKGRAPH_OUTBOUND_ALLOW: "loopback,everywhere" })
    expect(Either.isLeft(bad) && String(bad.left)).toMatch(/TALKGRAPH_OUTBOUND_ALLOW.*"everywhere" is not an entry/)
  })

  it("refuses a value it cannot read, naming the entry", () => {
    expect(Either.isLeft(parseOutboundAllow("loopback,everything"))).toBe(true)
    expect(Either.getLeft(parseOutboundAllow("10.0.0.0/33"))._tag === "Some").toBe(true)
    expect(Either.isLeft(parseOutboundAllow("none,loopback"))).toBe(true)
    expect(Either.isRight(parseOutboundAllow("none"))).toBe(true)
  })
})

describe("provider base URLs", () => {
  it("refuse a query string, a fragment or credentials, which would change the fixed paths under them", () => {
    expect(baseUrlProblem("https://api.example.com/v1")).toBeNull()
    expect(baseUrlProblem("http://127.0.0.1:11434/v1/")).toBeNull()
    expect(baseUrlProblem("https://evil.example/x?")).toMatch(/query string/)
    expect(baseUrlProblem("https://evil.example/x?a=1")).toMatch(/query string/)
    expect(baseUrlProblem("https://evil.example/x#")).toMatch(/fragment/)
    expect(baseUrlProblem("https://user:pass@api.example.com")).toMatch(/credentials/)
    expect(baseUrlProblem("ftp://files.example.com")).toMatch(/http\(s\)/)
    expect(endpointUnder("https://api.example.com/v1/", "/chat/completions")?.href).toBe(
      "https://api.example.com/v1/chat/completions"
    )
    expect(endpointUnder("https://evil.example/x?", "/chat/completions")).toBeNull()
  })
})
