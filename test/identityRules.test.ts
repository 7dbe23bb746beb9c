import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { apiKeyDisplayPrefix, newApiKey, newSessionToken } from "../src/identity/tokens.ts"
import { makeSecretBox } from "../layers/secrets/secretBox.ts"

describe("tokens", () => {
  it("are unique, prefixed, and show only a short prefix", () => {
    const keys = new Set(Array.from({ length: 1000 }, newApiKey))
    expect(keys.size).toBe(1000)
    const key = newApiKey()
    expect(apiKeyDisplayPrefix(key)).toHaveLength(12)
    expect(newSessionToken()).toMatch(/^tgs_[A-Za-z0-9_-]{43}$/)
  })
})

describe("secret box", () => {
  const box = makeSecretBox("a".repeat(64))

  it("round-trips encrypted text, with a fresh nonce each time", async () => {
    const sealed = box.encrypt("twilio-auth-token")
    expect(sealed).not.toContain("twilio")
    expect(box.encrypt("twilio-auth-token")).not.toBe(sealed)
    expect(await Effect.runPromise(box.decrypt(sealed))).toBe("twilio-auth-token")
  })

  it("refuses tampered ciphertext and another key's ciphertext", async () => {
    const sealed = box.encrypt("secret")
    const parts = sealed.split(".")
    parts[2] = parts[2]!.slice(0, -2) + (parts[2]!.endsWith("A") ? "BB" : "AA")
    const tampered = await Effect.runPromise(Effect.either(box.decrypt(parts.join("."))))
    expect(tampered._tag).toBe("Left")
    const other = makeSecretBox("b".repeat(64))
    expect((await Effect.runPromise(Effect.either(other.decrypt(sealed))))._tag).toBe("Left")
  })

  it("hashes tokens with the server key, and signs per purpose", () => {
    expect(box.tokenHash("tgk_x")).toBe(box.tokenHash("tgk_x"))
    expect(box.tokenHash("tgk_x")).not.toBe(makeSecretBox("b".repeat(64)).tokenHash("tgk_x"))
    const signature = box.sign("upload", "key=1&expires=2")
    expect(box.verify("upload", "key=1&expires=2", signature)).toBe(true)
    expect(box.verify("upload", "key=1&expires=3", signature)).toBe(false)
    expect(box.verify("media", "key=1&expires=2", signature)).toBe(false)
  })
})
