import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What a carrier's progress events tell about a placed call before it ends: the live call's own
 * id where it is not the placement's (Plivo answers a request UUID, then names the call by its
 * CallUUID, which hanging up takes), and answering-machine detection's verdict, which Vonage,
 * Telnyx and Plivo send mid-call, before the event that ends the call.
 */
export const carrierCallProgress = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE campaign_attempts
      ADD COLUMN live_call_id text,
      ADD COLUMN answered_by text CHECK (answered_by IN ('human', 'machine'))`
})
