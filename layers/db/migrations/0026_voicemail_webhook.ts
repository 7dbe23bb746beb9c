import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `call.voicemail`: a finished run whose call reached an answering machine, told by the agent's
 * in-call detection (the run's end reason) or by the carrier's (its attempt's outcome, set in the
 * same statement that ends the run). Fired with `run.completed`, once the run is stored, so the
 * event's body is the finished run whichever detection spoke.
 */
export const voicemailWebhook = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE OR REPLACE FUNCTION talkgraph_run_finished() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM talkgraph_webhook_event(NEW.organization_id, 'run.completed', NEW.id, NEW.campaign_id,
                                      'run.completed:' || NEW.id);
      IF NEW.end_reason = 'voicemail'
         OR EXISTS (SELECT 1 FROM campaign_attempts WHERE run_id = NEW.id AND outcome = 'voicemail') THEN
        PERFORM talkgraph_webhook_event(NEW.organization_id, 'call.voicemail', NEW.id, NEW.campaign_id,
                                        'call.voicemail:' || NEW.id);
      END IF;
      RETURN NEW;
    END $$`
})
