import { Context, type Effect } from "effect"
import type { Forbidden, PayloadTooLarge } from "../src/domain/errors.ts"
import type { OrganizationId } from "../src/domain/ids.ts"
import type { QuotaUse } from "../src/storage/storageQuota.ts"

/**
 * The account of what each organization keeps in storage (table `stored_objects`), which its
 * storage quota is checked against, and the claims that let an upload URL be used once. The
 * storage backends keep it current; the organization is read from each key (`ownerOfKey`).
 */
export interface StoredObjectsShape {
  readonly use: (organizationId: OrganizationId) => Effect.Effect<QuotaUse>
  /** Refuses (413) an upload of `bytes` that would take the organization past its quota. */
  readonly ensureRoom: (organizationId: OrganizationId, bytes: number) => Effect.Effect<void, PayloadTooLarge>
  /** Claims `key` for one upload; refused (403) while another upload to it is under way or once it is stored. */
  readonly claimUpload: (organizationId: OrganizationId, key: string) => Effect.Effect<void, Forbidden>
  /**
   * Settles a claimed upload of `bytes`: under a lock on the organization (so two concurrent
   * uploads cannot both slip under the quota) it is checked against the quota, `place` puts the
   * file where readers find it, and the object counts from then on. Past the quota: 413.
   */
  readonly completeUpload: <E>(
    organizationId: OrganizationId,
    key: string,
    bytes: number,
    place: Effect.Effect<void, E>
  ) => Effect.Effect<void, PayloadTooLarge | E>
  /** Drops the claim of an upload that failed or was aborted: its URL may be used again until it expires. */
  readonly releaseUpload: (key: string) => Effect.Effect<void>
  /** Counts an object the server wrote itself, or found in the store (direct S3 uploads). */
  readonly record: (key: string, bytes: number) => Effect.Effect<void>
  readonly forget: (key: string) => Effect.Effect<void>
  /** Drops claims older than `seconds` whose upload can no longer be under way (a process died mid-upload). */
  readonly dropStaleClaims: (seconds: number) => Effect.Effect<number>
}

export class StoredObjects extends Context.Tag("talkgraph/StoredObjects")<StoredObjects, StoredObjectsShape>() {}
