import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * `call.transfer`: a finished run whose call the agent transferred (its gathered context holds the
 * transfer's outcome, answered or not). Fired with `run.completed`, once the run is stored, so the
 * event's body is the finished run with the transfer's destination and outcome.
 */
export const transferWebhook = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE OR REPLACE FUNCTION talkgraph_run_finished() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM talkgraph_webhook_event(NEW.organization_id, 'run.completed', NEW.id, NEW.campaign_id,
                                      'run.completed:' || NEW.id);
      -- An agent test's rehearsal reaches no one's systems.
      IF NEW.mode NOT IN ('testchat', 'testcall') THEN
        PERFORM talkgraph_webhook_nodes(NEW.organization_id, NEW.id, NEW.campaign_id, NEW.workflow_id,
                                        NEW.definition_id);
      END IF;
      IF NEW.end_reason = 'voicemail'
         OR EXISTS (SELECT 1 FROM campaign_attempts WHERE run_id = NEW.id AND outcome = 'voicemail') THEN
        PERFORM talkgraph_webhook_event(NEW.organization_id, 'call.voicemail', NEW.id, NEW.campaign_id,
                                        'call.voicemail:' || NEW.id);
      END IF;
      IF NEW.gathered_context ? 'transfer_outcome' THEN
        PERFORM talkgraph_webhook_event(NEW.organization_id, 'call.transfer', NEW.id, NEW.campaign_id,
                                        'call.transfer:' || NEW.id);
      END IF;
      RETURN NEW;
    END $$`
})
