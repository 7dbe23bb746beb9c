import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Caller-ID pools (README "Caller-ID pools"). A campaign's `caller_id_pool` names how it picks the
 * number each call is placed from; the claim counts each pool number's recent calls (every
 * campaign's and single call's, by `caller_number`) to keep its caps, through the index below. A
 * number the carrier refused as a caller ID is marked, with the carrier's reason, and leaves every
 * pool until someone edits it.
 */
export const callerIdPools = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE campaigns ADD COLUMN caller_id_pool jsonb`
  yield* sql`
    ALTER TABLE phone_numbers
      ADD COLUMN caller_id_refused_at timestamptz,
      ADD COLUMN caller_id_refused_reason text`
  yield* sql`
    CREATE INDEX campaign_attempts_caller_recent ON campaign_attempts (organization_id, caller_number, created_at)`
})
