import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What each organization keeps in storage, one row per object: the sum is what its storage quota
 * is checked against. A row in state `receiving` is an upload under way: its key can be claimed by
 * one upload at a time, and once `stored` never again, so an upload URL works once (checked in the
 * database because another process may receive the replay).
 */
export const storedObjects = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE stored_objects (
      key text PRIMARY KEY,
      organization_id bigint NOT NULL,
      size_bytes bigint NOT NULL DEFAULT 0,
      state text NOT NULL CHECK (state IN ('receiving', 'stored')),
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX stored_objects_organization ON stored_objects (organization_id, state)`
})
