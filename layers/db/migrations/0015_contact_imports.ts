import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A campaign's contacts are loaded in the background, in short transactions, while the campaign
 * is `created` with `import_status = 'loading'`; publishing them is one update to `ready`, and only
 * a ready campaign can start. The process loading them is `import_owner` and proves it is alive
 * through `import_heartbeat_at`, so any process can fail an import whose loader died. Campaigns
 * that existed before are ready.
 */
export const contactImports = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE campaigns
      ADD COLUMN import_status text NOT NULL DEFAULT 'ready' CHECK (import_status IN ('loading', 'ready', 'failed')),
      ADD COLUMN import_contacts integer NOT NULL DEFAULT 0,
      ADD COLUMN import_bytes_read bigint NOT NULL DEFAULT 0,
      ADD COLUMN import_bytes_total bigint,
      ADD COLUMN import_errors jsonb NOT NULL DEFAULT '[]',
      ADD COLUMN import_owner text,
      ADD COLUMN import_heartbeat_at timestamptz`
  yield* sql`UPDATE campaigns SET import_contacts = COALESCE(total_rows, 0)`
  // What the sweeper looks for: loading imports whose loader may have died, failed ones to clear.
  yield* sql`CREATE INDEX campaigns_imports ON campaigns (import_heartbeat_at) WHERE import_status <> 'ready'`
})
