import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * A campaign's own voicemail policy (the shape of an agent's `workflow_configurations.voicemail`),
 * used by its calls instead of the agent's; null: the agent's applies.
 */
export const campaignVoicemail = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE campaigns ADD COLUMN voicemail jsonb`
})
