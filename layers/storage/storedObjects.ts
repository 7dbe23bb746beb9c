import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { StoredObjects } from "../../services/StoredObjects.ts"
import { Forbidden, PayloadTooLarge } from "../../src/domain/errors.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"
import { ownerOfKey } from "../../src/storage/keyOwner.ts"
import { storageConfig } from "../../src/storage/storageConfig.ts"
import { quotaRefusal } from "../../src/storage/storageQuota.ts"

export const StoredObjectsLive = Layer.effect(
  StoredObjects,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { storageQuotaBytes } = yield* storageConfig.pipe(Effect.orDie)

    const usedBytes = (organizationId: OrganizationId) =>
      sql<{ used: number }>`
        SELECT coalesce(sum(size_bytes), 0)::bigint AS used FROM stored_objects
        WHERE organization_id = ${organizationId} AND state = 'stored'`.pipe(Effect.map((rows) => rows[0]!.used))

    const use = Effect.fn("StoredObjects.use")(function*(organizationId: OrganizationId) {
      return { quotaBytes: storageQuotaBytes, usedBytes: yield* usedBytes(organizationId) }
    }, Effect.orDie)

    const ensureRoom = Effect.fn("StoredObjects.ensureRoom")(function*(organizationId: OrganizationId, bytes: number) {
      const refusal = quotaRefusal(yield* use(organizationId), bytes)
      if (refusal !== undefined) return yield* new PayloadTooLarge({ message: refusal })
    })

    const claimUpload = Effect.fn("StoredObjects.claimUpload")(function*(organizationId: OrganizationId, key: string) {
      const claimed = yield* sql<{ key: string }>`
        INSERT INTO stored_objects (key, organization_id, state) VALUES (${key}, ${organizationId}, 'receiving')
        ON CONFLICT (key) DO NOTHING
        RETURNING key`.pipe(Effect.orDie)
      if (claimed.length === 0) {
        return yield* new Forbidden({ message: "This upload URL has already been used; request a new upload URL" })
      }
    })

    const completeUpload = <E>(
      organizationId: OrganizationId,
      key: string,
      bytes: number,
      place: Effect.Effect<void, E>
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        // Not FOR UPDATE: that would also hold up every insert referencing the organization.
        yield* sql`SELECT id FROM organizations WHERE id = ${organizationId} FOR NO KEY UPDATE`
        const refusal = quotaRefusal(
          { quotaBytes: storageQuotaBytes, usedBytes: yield* usedBytes(organizationId) },
          bytes
        )
        if (refusal !== undefined) return yield* new PayloadTooLarge({ message: refusal })
        yield* sql`
          INSERT INTO stored_objects (key, organization_id, size_bytes, state) VALUES (${key}, ${organizationId}, ${bytes}, 'stored')
          ON CONFLICT (key) DO UPDATE SET size_bytes = EXCLUDED.size_bytes, state = 'stored', updated_at = now()`
        yield* place
      })).pipe(
        Effect.catchTag("SqlError", Effect.die),
        Effect.withSpan("StoredObjects.completeUpload", { attributes: { key, bytes } })
      )

    const releaseUpload = Effect.fn("StoredObjects.releaseUpload")(function*(key: string) {
      yield* sql`DELETE FROM stored_objects WHERE key = ${key} AND state = 'receiving'`
    }, Effect.orDie)

    const record = Effect.fn("StoredObjects.record")(function*(key: string, bytes: number) {
      const owner = ownerOfKey(key)
      if (owner === undefined) return
      yield* sql`
        INSERT INTO stored_objects (key, organization_id, size_bytes, state) VALUES (${key}, ${owner}, ${bytes}, 'stored')
        ON CONFLICT (key) DO UPDATE SET size_bytes = EXCLUDED.size_bytes, state = 'stored', updated_at = now()`
    }, Effect.orDie)

    const forget = Effect.fn("StoredObjects.forget")(function*(key: string) {
      yield* sql`DELETE FROM stored_objects WHERE key = ${key}`
    }, Effect.orDie)

    const dropStaleClaims = Effect.fn("StoredObjects.dropStaleClaims")(function*(seconds: number) {
      const dropped = yield* sql<{ key: string }>`
        DELETE FROM stored_objects
        WHERE state = 'receiving' AND updated_at < now() - make_interval(secs => ${seconds})
        RETURNING key`
      return dropped.length
    }, Effect.orDie)

    return StoredObjects.of({
      use,
      ensureRoom,
      claimUpload,
      completeUpload,
      releaseUpload,
      record,
      forget,
      dropStaleClaims
    })
  })
)
