import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What a live conversation needs beyond the run row: where it stands in the graph
 * (`conversation`), a short lease that lets exactly one process answer a message at a time
 * (`busy_token` names the holder, `busy_until` lets a crashed holder's lease lapse), and the timers the idle sweeper reads.
 */
export const conversations = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE runs
      ADD COLUMN conversation jsonb,
      ADD COLUMN busy_until timestamptz,
      ADD COLUMN busy_token uuid,
      ADD COLUMN last_activity_at timestamptz,
      ADD COLUMN idle_timeout_seconds integer,
      ADD COLUMN max_duration_seconds integer`
  // The sweeper looks only at live chats; finished runs drop out of this partial index.
  yield* sql`
    CREATE INDEX runs_live_chats ON runs (last_activity_at)
    WHERE channel = 'chat' AND state = 'running'`
})
