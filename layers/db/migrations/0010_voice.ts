import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Voice calls: a run's turn latency (caller stops speaking → first agent audio) summarized where
 * reports can read it, the carrier call behind an inbound run (to hang it up), and phone numbers
 * that answer inbound calls with an agent.
 */
export const voice = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE runs
      ADD COLUMN latency_p50_ms integer,
      ADD COLUMN latency_p90_ms integer,
      ADD COLUMN provider_call_id text,
      ADD COLUMN telephony_configuration_id bigint REFERENCES telephony_configurations (id) ON DELETE SET NULL`
  yield* sql`
    ALTER TABLE phone_numbers
      ADD COLUMN inbound_workflow_id bigint REFERENCES workflows (id) ON DELETE SET NULL`
})
