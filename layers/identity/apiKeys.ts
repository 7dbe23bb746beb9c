import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer } from "effect"
import { NotFound } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { allScopes, type Scope } from "../../src/domain/scopes.ts"
import { apiKeyDisplayPrefix, newApiKey } from "../../src/identity/tokens.ts"
import { ApiKeys, type ApiKeyView } from "../../services/ApiKeys.ts"
import { ApiKeyVerifications } from "../../services/ApiKeyVerifications.ts"
import { SecretBox, type SecretBoxShape } from "../../services/SecretBox.ts"

/** How long a verified key is trusted without a lookup: the bound on a revocation made elsewhere. */
const VERIFICATION_TTL_MS = 1000
const VERIFICATION_LIMIT = 10_000

interface Verification {
  readonly principal: Principal
  readonly expiresAt: number
}

/**
 * Kept by the key's hash, never the key itself. No span of its own: a miss runs inside
 * `Identity.authenticate`'s, and a hit is the few microseconds this exists to be.
 */
export const makeApiKeyVerifications = (secrets: SecretBoxShape) => {
  const verifications = new Map<string, Verification>()
  // Bumped by every forget: a lookup that began before a revocation must not store what it read.
  let forgets = 0

  const remember = (hash: string, principal: Principal, now: number) => {
    if (verifications.size >= VERIFICATION_LIMIT) {
      for (const [key, entry] of verifications) if (entry.expiresAt <= now) verifications.delete(key)
      if (verifications.size >= VERIFICATION_LIMIT) verifications.clear()
    }
    verifications.set(hash, { principal, expiresAt: now + VERIFICATION_TTL_MS })
  }

  return ApiKeyVerifications.of({
    verified: <E>(apiKey: string, verify: Effect.Effect<Principal, E>) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const hash = secrets.tokenHash(apiKey)
        const known = verifications.get(hash)
        if (known && known.expiresAt > now) return Effect.succeed(known.principal)
        const forgetsBefore = forgets
        return Effect.tap(verify, (principal) =>
          Effect.sync(() => {
            if (forgets === forgetsBefore) remember(hash, principal, now)
          }))
      }),
    forget: (apiKeyId) =>
      Effect.sync(() => {
        forgets++
        for (const [hash, entry] of verifications) if (entry.principal.apiKeyId === apiKeyId) verifications.delete(hash)
      })
  })
}

interface ApiKeyRow {
  readonly id: number
  readonly name: string
  readonly key_prefix: string
  readonly scopes: Array<Scope> | null
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

const toView = (row: ApiKeyRow): ApiKeyView => ({
  id: row.id,
  name: row.name,
  key_prefix: row.key_prefix,
  scopes: row.scopes ?? allScopes,
  is_active: row.revoked_at === null,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
  revoked_at: row.revoked_at
})

/** The key management service and, sharing its knowledge of revocations, the verification cache. */
export const ApiKeysLive = Layer.effectContext(
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* SecretBox
    const verifications = makeApiKeyVerifications(secrets)

    const create = Effect.fn("ApiKeys.create")(function* (
      principal: Principal,
      input: { readonly name: string; readonly scopes?: ReadonlyArray<Scope> | undefined }
    ) {
      const key = newApiKey()
      const scopes = input.scopes ? [...new Set(input.scopes)] : null
      const [row] = yield* sql<ApiKeyRow>`
        INSERT INTO api_keys (organization_id, created_by, name, key_prefix, key_hash, scopes)
        VALUES (${principal.organizationId}, ${principal.userId}, ${input.name}, ${apiKeyDisplayPrefix(key)},
                ${secrets.tokenHash(key)}, ${scopes})
        RETURNING id, name, key_prefix, scopes, created_at, last_used_at, revoked_at`
      const view = toView(row!)
      return {
        id: view.id,
        name: view.name,
        key_prefix: view.key_prefix,
        api_key: key,
        scopes: view.scopes,
        created_at: view.created_at
      }
    }, Effect.orDie)

    const list = Effect.fn("ApiKeys.list")(function* (principal: Principal, options: { readonly includeArchived: boolean }) {
      const rows = yield* sql<ApiKeyRow>`
        SELECT id, name, key_prefix, scopes, created_at, last_used_at, revoked_at
        FROM api_keys
        WHERE organization_id = ${principal.organizationId} AND (${options.includeArchived} OR revoked_at IS NULL)
        ORDER BY id`
      return rows.map(toView)
    }, Effect.orDie)

    const setRevoked = (principal: Principal, id: number, revoked: boolean) =>
      Effect.gen(function* () {
        const rows = yield* sql<ApiKeyRow>`
          UPDATE api_keys
          SET revoked_at = CASE WHEN ${revoked} THEN coalesce(revoked_at, now()) ELSE NULL END
          WHERE id = ${id} AND organization_id = ${principal.organizationId}
          RETURNING id, name, key_prefix, scopes, created_at, last_used_at, revoked_at`
        const row = rows[0]
        if (!row) return yield* new NotFound({ resource: "API key", id })
        if (revoked) yield* verifications.forget(row.id)
        return toView(row)
      }).pipe(Effect.catchTag("SqlError", Effect.die))

    const revoke = Effect.fn("ApiKeys.revoke")((principal: Principal, id: number) => setRevoked(principal, id, true))
    const reactivate = Effect.fn("ApiKeys.reactivate")((principal: Principal, id: number) =>
      setRevoked(principal, id, false)
    )

    return Context.make(ApiKeys, ApiKeys.of({ create, list, revoke, reactivate })).pipe(
      Context.add(ApiKeyVerifications, verifications)
    )
  })
)
