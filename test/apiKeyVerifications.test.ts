import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Fiber, TestClock } from "effect"
import { makeApiKeyVerifications } from "../layers/identity/apiKeys.ts"
import { makeSecretBox } from "../layers/secrets/secretBox.ts"
import { Unauthenticated } from "../src/domain/errors.ts"
import { OrganizationId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import { allScopes } from "../src/domain/scopes.ts"
import { newAccount, newApiKey } from "./support/accounts.ts"
import { client } from "./support/client.ts"
import { postgresUrl } from "./support/database.ts"
import { type RunningServer, startServer } from "./support/server.ts"

const principal = (apiKeyId: number): Principal => ({
  userId: 1,
  organizationId: OrganizationId.make(1),
  role: "owner",
  via: "apiKey",
  sessionId: null,
  apiKeyId,
  scopes: allScopes
})

/** A lookup that counts how often it ran, standing in for the database. */
const countedLookup = (answer: Effect.Effect<Principal, Unauthenticated>) => {
  let lookups = 0
  return { lookup: Effect.suspend(() => (lookups++, answer)), lookups: () => lookups }
}

const verifications = () => makeApiKeyVerifications(makeSecretBox("test-secret-key-test-secret-key-0123456789"))

describe("API key verifications", () => {
  it.effect("reuse a verified key for one second, then look it up again", () =>
    Effect.gen(function*() {
      const cache = verifications()
      const { lookup, lookups } = countedLookup(Effect.succeed(principal(7)))
      expect(yield* cache.verified("tgk_a", lookup)).toEqual(principal(7))
      yield* TestClock.adjust("999 millis")
      yield* cache.verified("tgk_a", lookup)
      expect(lookups()).toBe(1)
      yield* TestClock.adjust("1 millis")
      yield* cache.verified("tgk_a", lookup)
      expect(lookups()).toBe(2)
      yield* cache.verified("tgk_b", lookup)
      expect(lookups()).toBe(3)
    }))

  it.effect("never remember a refusal", () =>
    Effect.gen(function*() {
      const cache = verifications()
      const { lookup, lookups } = countedLookup(
        Effect.fail(new Unauthenticated({ message: "Invalid or revoked API key" }))
      )
      expect((yield* Effect.flip(cache.verified("tgk_a", lookup)))._tag).toBe("Unauthenticated")
      expect((yield* Effect.flip(cache.verified("tgk_a", lookup)))._tag).toBe("Unauthenticated")
      expect(lookups()).toBe(2)
    }))

  it.effect("forget a revoked key at once, including a lookup that was under way when it was revoked", () =>
    Effect.gen(function*() {
      const cache = verifications()
      const { lookup, lookups } = countedLookup(Effect.succeed(principal(7)))
      const other = countedLookup(Effect.succeed(principal(8)))
      yield* cache.verified("tgk_a", lookup)
      yield* cache.verified("tgk_other", other.lookup)
      yield* cache.forget(7)
      yield* cache.verified("tgk_a", lookup)
      yield* cache.verified("tgk_other", other.lookup)
      expect(lookups()).toBe(2)
      expect(other.lookups()).toBe(1)

      // A lookup that read the key before its revocation was stored answers, but is not kept.
      yield* cache.forget(7)
      const read = yield* Deferred.make<void>()
      const slow = countedLookup(Effect.as(Deferred.await(read), principal(9)))
      const inFlight = yield* Effect.fork(cache.verified("tgk_c", slow.lookup))
      yield* Effect.yieldNow()
      yield* cache.forget(9)
      yield* Deferred.succeed(read, undefined)
      expect(yield* Fiber.join(inFlight)).toEqual(principal(9))
      yield* cache.verified("tgk_c", slow.lookup)
      expect(slow.lookups()).toBe(2)
    }))
})

// Two processes share one database only on PostgreSQL (an embedded data dir has one owner).
describe.skipIf(!postgresUrl())("API key revocation across processes", () => {
  let first: RunningServer
  let second: RunningServer
  beforeAll(async () => {
    ;[first, second] = await Promise.all([startServer(), startServer()])
  })
  afterAll(async () => {
    await first?.close()
    await second?.close()
  })

  it("is honoured by every other process within a second", async () => {
    const api = client(first.url)
    const elsewhere = client(second.url)
    const account = await newAccount(api, "revoker")
    const key = await newApiKey(api, account)
    const [{ id }] = (await api.get("/api/v1/user/api-keys", { token: account.token })).body
    expect((await elsewhere.get("/api/v2/status", { apiKey: key })).status).toBe(200)

    expect((await api.delete(`/api/v1/user/api-keys/${id}`, { token: account.token })).status).toBe(200)
    const revokedAt = Date.now()
    expect((await api.get("/api/v2/status", { apiKey: key })).status).toBe(401)
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, revokedAt + 1000 - Date.now())))
    expect((await elsewhere.get("/api/v2/status", { apiKey: key })).status).toBe(401)
  })
})
