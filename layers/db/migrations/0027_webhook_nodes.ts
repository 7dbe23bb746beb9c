import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Dograh `webhook` nodes: a finished run of an agent sends each enabled webhook node of the
 * version it ran. A node's message is a delivery of the same outbox as the organization's
 * endpoints (`webhook_deliveries`), with the node as its target instead of an endpoint: the node's
 * request (url, method, headers, credential, payload template) is copied onto the delivery when
 * the run finishes, so a later edit of the agent does not change what a retry sends; its rendered
 * body (`body`) is fixed at the first attempt like an event's payload. Written by the trigger that
 * writes `run.completed`, in the transaction that finished the run. Agent tests' conversations
 * (`testchat`, `testcall`) send nothing: a rehearsal must not reach anyone's CRM.
 */
export const webhookNodes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    ALTER TABLE webhook_deliveries
      ALTER COLUMN endpoint_id DROP NOT NULL,
      ADD COLUMN workflow_id bigint REFERENCES workflows (id) ON DELETE CASCADE,
      ADD COLUMN node_id text,
      ADD COLUMN node_request jsonb,
      ADD COLUMN body jsonb,
      ADD CONSTRAINT webhook_deliveries_one_target CHECK ((endpoint_id IS NULL) <> (node_id IS NULL))`
  yield* sql`CREATE UNIQUE INDEX webhook_deliveries_node ON webhook_deliveries (event_id, node_id) WHERE node_id IS NOT NULL`
  yield* sql`CREATE INDEX webhook_deliveries_workflow ON webhook_deliveries (workflow_id, id DESC) WHERE workflow_id IS NOT NULL`

  // The run's enabled webhook nodes, each one delivery of the run's `run.completed` event (written
  // here when no endpoint asked for it). Disabled nodes (`enabled: false`) send nothing.
  yield* sql`
    CREATE FUNCTION talkgraph_webhook_nodes(org bigint, run bigint, campaign bigint, workflow bigint, definition bigint)
    RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      run_event bigint;
      at timestamptz := date_trunc('milliseconds', now());
    BEGIN
      IF definition IS NULL OR NOT EXISTS (
        SELECT 1 FROM workflow_definitions d, jsonb_array_elements(d.workflow_definition -> 'nodes') n
        WHERE d.id = definition AND n ->> 'type' = 'webhook' AND COALESCE(n -> 'data' ->> 'enabled', 'true') <> 'false'
      ) THEN
        RETURN;
      END IF;
      INSERT INTO webhook_events (organization_id, type, run_id, campaign_id, occurred_at, dedupe_key)
      VALUES (org, 'run.completed', run, campaign, at, 'run.completed:' || run)
      ON CONFLICT (dedupe_key) DO NOTHING;
      SELECT e.id INTO run_event FROM webhook_events e WHERE e.dedupe_key = 'run.completed:' || run;
      INSERT INTO webhook_deliveries (organization_id, workflow_id, node_id, node_request, event_id, next_attempt_at,
                                      retry_until, created_at)
      SELECT org, workflow, n ->> 'id', n -> 'data', run_event, at, at + interval '24 hours', at
      FROM workflow_definitions d, jsonb_array_elements(d.workflow_definition -> 'nodes') n
      WHERE d.id = definition AND n ->> 'type' = 'webhook' AND COALESCE(n -> 'data' ->> 'enabled', 'true') <> 'false'
      ON CONFLICT (event_id, node_id) WHERE node_id IS NOT NULL DO NOTHING;
      PERFORM pg_notify('talkgraph_webhooks', '');
    END $$`
  // The endpoints' event first: it writes the event only when an endpoint asked for it, and would
  // skip its own deliveries if the nodes had written it already.
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
      RETURN NEW;
    END $$`
})
