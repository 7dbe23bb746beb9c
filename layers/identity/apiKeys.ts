import { SqlClient } from "@effect/sql"
import { Clock, Context, Effect, Layer } from "effect"
import { ApiKeys, type ApiKeyView } from "../../services/ApiKeys.ts"
import { ApiKeyVerifications } from "../../services/ApiKeyVerifications.ts"
import { SecretBox, type SecretBoxShape } from "../../services/SecretBox.ts"
import { Forbidden, NotFound } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { keyManagementRefusal, reactivationRefusal, type Role, seesEveryKey } from "../../src/domain/roles.ts"
import { allScopes, type Scope } from "../../src/domain/scopes.ts"
import { apiKeyDisplayPrefix, newApiKey } from "../../src/identity/tokens.ts"

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

  const forgetWhere = (matches: (principal: Principal) => boolean) =>
    Effect.sync(() => {
      forgets++
      for (const [hash, entry] of verifications) if (matches(entry.principal)) verifications.delete(hash)
    })

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
    forget: (apiKeyId) => forgetWhere((principal) => principal.apiKeyId === apiKeyId),
    forgetUser: (userId) => forgetWhere((principal) => principal.userId === userId)
  })
}

interface ApiKeyRow {
  readonly id: number
  readonly name: string
  readonly created_by: number
  readonly key_prefix: string
  readonly scopes: Array<Scope> | null
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

const keyColumns = "id, name, created_by, key_prefix, scopes, created_at, last_used_at, revoked_at"

const toView = (row: ApiKeyRow): ApiKeyView => ({
  id: row.id,
  name: row.name,
  created_by: row.created_by,
  key_prefix: row.key_prefix,
  scopes: row.scopes ?? allScopes,
  is_active: row.revoked_at === null,
  created_at: row.created_at,
  last_used_at: row.last_used_at,
  revoked_at: row.revoked_at
})

/** The key management service and, sharing its knowledge of revocations, the verification cache. */
export const ApiKeysLive = Layer.effectContext(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* SecretBox
    const verifications = makeApiKeyVerifications(secrets)

    const create = Effect.fn("ApiKeys.create")(function*(
      principal: Principal,
      input: { readonly name: string; readonly scopes?: ReadonlyArray<Scope> | undefined }
    ) {
      const key = newApiKey()
      const scopes = input.scopes ? [...new Set(input.scopes)] : null
      const [row] = yield* sql<ApiKeyRow>`
        INSERT INTO api_keys (organization_id, created_by, name, key_prefix, key_hash, scopes)
        VALUES (${principal.organizationId}, ${principal.userId}, ${input.name}, ${apiKeyDisplayPrefix(key)},
                ${secrets.tokenHash(key)}, ${scopes})
        RETURNING ${sql.literal(keyColumns)}`
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

    const list = Effect.fn("ApiKeys.list")(
      function*(principal: Principal, options: { readonly includeArchived: boolean }) {
        const everyKey = seesEveryKey(principal)
        const rows = yield* sql<ApiKeyRow>`
        SELECT ${sql.literal(keyColumns)} FROM api_keys
        WHERE organization_id = ${principal.organizationId} AND (${everyKey} OR created_by = ${principal.userId})
          AND (${options.includeArchived} OR revoked_at IS NULL)
        ORDER BY id`
        return rows.map(toView)
      },
      Effect.orDie
    )

    /**
     * Decides and stores a revocation or reactivation under the key's row lock, so a reactivation
     * sees a revocation made at the same moment and who made it.
     */
    const setRevoked = (principal: Principal, id: number, revoked: boolean) =>
      sql.withTransaction(Effect.gen(function*() {
        const [key] = yield* sql<
          { created_by: number; revoked_by: number | null; creator_role: Role | null; revoker_role: Role | null }
        >`
          SELECT k.created_by, k.revoked_by, creator.role AS creator_role, revoker.role AS revoker_role
          FROM api_keys k
          LEFT JOIN memberships creator ON creator.user_id = k.created_by AND creator.organization_id = k.organization_id
          LEFT JOIN memberships revoker ON revoker.user_id = k.revoked_by AND revoker.organization_id = k.organization_id
          WHERE k.id = ${id} AND k.organization_id = ${principal.organizationId}
          FOR UPDATE OF k`
        if (!key) return yield* new NotFound({ resource: "API key", id })
        const ownership = { createdBy: key.created_by, creatorRole: key.creator_role }
        const refusal = revoked
          ? keyManagementRefusal(principal, ownership)
          : reactivationRefusal(principal, { ...ownership, revokedBy: key.revoked_by, revokerRole: key.revoker_role })
        if (refusal) return yield* new Forbidden({ message: refusal.message })
        const [row] = yield* sql<ApiKeyRow>`
          UPDATE api_keys
          SET revoked_at = CASE WHEN ${revoked} THEN coalesce(revoked_at, now()) END,
              revoked_by = CASE WHEN ${revoked} THEN coalesce(revoked_by, ${principal.userId}::bigint) END
          WHERE id = ${id}
          RETURNING ${sql.literal(keyColumns)}`
        return toView(row!)
      })).pipe(
        Effect.tap((view) => (revoked ? verifications.forget(view.id) : Effect.void)),
        Effect.catchTag("SqlError", Effect.die)
      )

    const revoke = Effect.fn("ApiKeys.revoke")((principal: Principal, id: number) => setRevoked(principal, id, true))
    const reactivate = Effect.fn("ApiKeys.reactivate")((principal: Principal, id: number) =>
      setRevoked(principal, id, false)
    )

    return Context.make(ApiKeys, ApiKeys.of({ create, list, revoke, reactivate })).pipe(
      Context.add(ApiKeyVerifications, verifications)
    )
  })
)
