import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Lets a live conversation's per-message writes be heap-only (HOT) updates. A message stores its
 * turns and touches `last_activity_at`; with that column indexed, every message wrote a new entry
 * into all eleven indexes of `runs`. The idle sweeper keeps its partial index over live chats, keyed
 * by id instead, and reads their timers from the rows (a sweep every few seconds, not every
 * message). Free room on each page lets the new row version stay beside the old one.
 */
export const hotRunUpdates = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX runs_live_chats`
  yield* sql`
    CREATE INDEX runs_live_chats ON runs (id)
    WHERE channel = 'chat' AND state = 'running'`
  yield* sql`ALTER TABLE runs SET (fillfactor = 80)`
})
