import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * What the dialer needs beyond the campaign tables: each attempt remembers the telephony
 * configuration that placed it (its callbacks are verified with those credentials even if the
 * campaign is later moved to another), the breaker forgets outcomes from before its last trip,
 * overdue calls are found by deadline, and every campaign state change is announced on
 * `talkgraph_campaigns` so the processes wake up instead of waiting for their next poll.
 */
export const campaignEngine = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE campaign_attempts
      ADD COLUMN telephony_configuration_id bigint REFERENCES telephony_configurations (id) ON DELETE SET NULL,
      ADD COLUMN provider text,
      ADD COLUMN caller_number text,
      ADD COLUMN answered_at timestamptz,
      ADD COLUMN end_reason text`
  yield* sql`ALTER TABLE campaigns ADD COLUMN breaker_reset_at timestamptz`
  // The deadline sweeper scans live attempts of every campaign by deadline.
  yield* sql`CREATE INDEX campaign_attempts_deadline ON campaign_attempts (deadline_at) WHERE ended_at IS NULL`
  // The achieved rate and the rate log read a campaign's latest attempts; the breaker its latest outcomes.
  yield* sql`CREATE INDEX campaign_attempts_recent ON campaign_attempts (campaign_id, created_at DESC)`
  yield* sql`CREATE INDEX campaign_attempts_ended ON campaign_attempts (campaign_id, ended_at) WHERE ended_at IS NOT NULL`
  yield* sql`
    CREATE FUNCTION talkgraph_campaign_changed() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('talkgraph_campaigns', NEW.id::text);
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER campaigns_state_changed AFTER UPDATE OF state ON campaigns
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION talkgraph_campaign_changed()`
})
