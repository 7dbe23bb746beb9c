import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { type Admission, admitAttempt, type AttemptRecord, defaultThrottlePolicy, retryAfterSeconds } from "../src/identity/loginThrottle.ts"
import { apiKeyDisplayPrefix, newApiKey, newSessionToken } from "../src/identity/tokens.ts"
import { makeSecretBox } from "../layers/secrets/secretBox.ts"

const at = (seconds: number) => new Date(Date.UTC(2026, 0, 1) + seconds * 1000)

describe("login throttle policy", () => {
  const attempt = (record: AttemptRecord | undefined, seconds: number) => admitAttempt(record, at(seconds), defaultThrottlePolicy)
  const admittedRecord = (admission: Admission) => {
    if (!admission.admitted) throw new Error("refused")
    return admission.record
  }

  it("admits five attempts inside the window; the fifth locks for the lock duration", () => {
    let record: AttemptRecord | undefined
    for (let i = 0; i < 4; i++) record = admittedRecord(attempt(record, i * 10))
    expect(retryAfterSeconds(record, at(40))).toBe(0)
    record = admittedRecord(attempt(record, 50))
    expect(retryAfterSeconds(record, at(50))).toBe(300)
    expect(attempt(record, 60)).toEqual({ admitted: false, retryAfterSeconds: 290 })
    expect(attempt(record, 349)).toEqual({ admitted: false, retryAfterSeconds: 1 })
    expect(attempt(record, 350).admitted).toBe(true)
  })

  it("counts an attempt before its password is checked, so overlapping attempts share the same five", () => {
    // Five attempts admitted in the same instant (none has finished): the sixth is refused.
    let record: AttemptRecord | undefined
    for (let i = 0; i < 5; i++) record = admittedRecord(attempt(record, 0))
    expect(attempt(record, 0)).toEqual({ admitted: false, retryAfterSeconds: 300 })
  })

  it("leaves a lock as it is when attempts are refused during it", () => {
    let record: AttemptRecord | undefined
    for (let i = 0; i < 5; i++) record = admittedRecord(attempt(record, i))
    const locked = record
    for (let i = 10; i < 200; i += 10) expect(attempt(locked, i).admitted).toBe(false)
    expect(locked?.lockedUntil).toEqual(at(304))
  })

  it("starts the count again after the lock ends", () => {
    let record: AttemptRecord | undefined
    for (let i = 0; i < 5; i++) record = admittedRecord(attempt(record, i))
    record = admittedRecord(attempt(record, 305))
    expect(record).toEqual({ attempts: 1, windowStartedAt: at(305), lockedUntil: null })
  })

  it("forgets attempts older than the window", () => {
    let record: AttemptRecord | undefined
    for (let i = 0; i < 4; i++) record = admittedRecord(attempt(record, i))
    record = admittedRecord(attempt(record, 901))
    expect(record.attempts).toBe(1)
    expect(retryAfterSeconds(record, at(901))).toBe(0)
  })
})

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
