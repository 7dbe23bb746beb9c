import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Lets a call's answer update its run heap-only (HOT). The answer moves the run to `running`, and
 * `state` was named by the live-chats index's predicate, which made every state change write a new
 * entry into all fourteen indexes of `runs`: fourteen entries more per answered call, for an index
 * that only the idle sweeper of chats reads. A running chat is one not yet ended, so the index
 * lists chats whose `ended_at` is unset (set by the same update that ends a chat), and the sweeper
 * names that condition too.
 */
export const liveChatsByEnd = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DROP INDEX runs_live_chats`
  yield* sql`CREATE INDEX runs_live_chats ON runs (id) WHERE channel = 'chat' AND ended_at IS NULL`
})
