import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { makeSecretBox } from "../layers/secrets/secretBox.ts"
import {
  addMemberRefusal,
  keyManagementRefusal,
  reactivationRefusal,
  removalRefusal,
  roleChangeRefusal,
  roleRefusal
} from "../src/domain/roles.ts"
import { emailProblem, passwordProblem } from "../src/identity/credentials.ts"
import { apiKeyDisplayPrefix, newApiKey, newSessionToken } from "../src/identity/tokens.ts"

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

describe("role rules", () => {
  const owner = { userId: 1, role: "owner" as const }
  const admin = { userId: 2, role: "admin" as const }
  const member = { userId: 3, role: "member" as const }
  const kind = (refusal: { readonly kind: string } | undefined) => refusal?.kind ?? "allowed"

  it("lets admins and owners add members, and only owners add owners", () => {
    expect([owner, admin, member].map((actor) => kind(addMemberRefusal(actor, "member")))).toEqual([
      "allowed",
      "allowed",
      "forbidden"
    ])
    expect([owner, admin, member].map((actor) => kind(addMemberRefusal(actor, "owner")))).toEqual([
      "allowed",
      "forbidden",
      "forbidden"
    ])
  })

  it("keeps an owner in every organization", () => {
    expect(kind(roleChangeRefusal(owner, owner, "admin", 1))).toBe("conflict")
    expect(kind(roleChangeRefusal(owner, owner, "admin", 2))).toBe("allowed")
    expect(kind(removalRefusal(owner, owner, 1))).toBe("conflict")
    expect(kind(removalRefusal(owner, { userId: 9, role: "owner" }, 2))).toBe("allowed")
    expect(kind(roleChangeRefusal(owner, owner, "owner", 1))).toBe("allowed")
  })

  it("lets only owners change or remove owners; anyone may leave", () => {
    expect(kind(roleChangeRefusal(admin, owner, "member", 2))).toBe("forbidden")
    expect(kind(roleChangeRefusal(admin, member, "owner", 1))).toBe("forbidden")
    expect(kind(roleChangeRefusal(admin, member, "admin", 1))).toBe("allowed")
    expect(kind(removalRefusal(admin, owner, 2))).toBe("forbidden")
    expect(kind(removalRefusal(member, admin, 1))).toBe("forbidden")
    expect(kind(removalRefusal(member, member, 1))).toBe("allowed")
  })

  it("lets a key's creator manage it, and admins or owners ranking at least as high as its creator", () => {
    const keyOf = (creator: { userId: number; role: "owner" | "admin" | "member" }) => ({
      createdBy: creator.userId,
      creatorRole: creator.role
    })
    expect(kind(keyManagementRefusal(member, keyOf(member)))).toBe("allowed")
    expect(kind(keyManagementRefusal(member, keyOf(owner)))).toBe("forbidden")
    expect(kind(keyManagementRefusal(admin, keyOf(member)))).toBe("allowed")
    expect(kind(keyManagementRefusal(admin, keyOf(owner)))).toBe("forbidden")
    expect(kind(keyManagementRefusal(admin, { createdBy: 9, creatorRole: null }))).toBe("allowed")
  })

  it("leaves a revocation to be undone only by its author or someone ranking at least as high", () => {
    const revoked = (by: { userId: number; role: "owner" | "admin" | "member" }) => ({
      createdBy: member.userId,
      creatorRole: "member" as const,
      revokedBy: by.userId,
      revokerRole: by.role
    })
    expect(kind(reactivationRefusal(member, revoked(member)))).toBe("allowed")
    expect(kind(reactivationRefusal(member, revoked(admin)))).toBe("forbidden")
    expect(kind(reactivationRefusal(admin, revoked(admin)))).toBe("allowed")
    expect(kind(reactivationRefusal(admin, revoked(owner)))).toBe("forbidden")
    expect(kind(reactivationRefusal(owner, revoked(owner)))).toBe("allowed")
  })

  it("says which role an action needs", () => {
    expect(roleRefusal(member, "admin")).toEqual({
      kind: "forbidden",
      message: "This needs the admin or owner role; you are a member"
    })
    expect(roleRefusal(admin, "admin")).toBeUndefined()
  })
})

describe("new account credentials", () => {
  it("accepts ordinary addresses and refuses what is not one", () => {
    for (
      const email of [
        "ada@example.com",
        "a.b+tag@mail.example.co.uk",
        "admin@talkgraph.local",
        "josé@exämple.de",
        "ops@localhost"
      ]
    ) {
      expect(emailProblem(email)).toBeUndefined()
    }
    for (
      const email of [
        "not-an-email",
        "@example.com",
        "ada@",
        "ada@@example.com",
        "a da@example.com",
        " ada@example.com",
        ".ada@example.com",
        "ada..b@example.com",
        "ada@-example.com",
        "ada@example..com",
        `${"a".repeat(65)}@example.com`,
        `ada@${"e".repeat(250)}.com`
      ]
    ) {
      expect(emailProblem(email)).toBeDefined()
    }
  })

  it("refuses short, blank, one-character and commonly used passwords, counting characters not bytes", () => {
    expect(passwordProblem("x")).toBe("must be at least 8 characters")
    expect(passwordProblem("        ")).toBe("must not be only spaces")
    expect(passwordProblem("aaaaaaaaaaaa")).toBe("must not be one character repeated")
    expect(passwordProblem("Password123")).toMatch(/most commonly used/)
    expect(passwordProblem("q".repeat(1025) + "x")).toBe("must be at most 1024 characters")
    expect(passwordProblem("🔑🔑🔑🔑🔑🔑🔑")).toBe("must be at least 8 characters")
    expect(passwordProblem("correct horse battery staple")).toBeUndefined()
    expect(passwordProblem("pässwörd-9")).toBeUndefined()
  })
})
