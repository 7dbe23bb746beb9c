import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Agent tests in voice mode: their conversations are runs of mode `testcall`, rehearsals like the
 * `testchat` ones, so they are not quality-reviewed either and share the test conversations' index.
 * A case's caller may talk over the agent (`interrupts`), which only a call can do.
 */
export const voiceTestCalls = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE OR REPLACE FUNCTION talkgraph_run_finished_quality_review() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.mode NOT IN ('testchat', 'testcall') AND EXISTS (
        SELECT 1 FROM workflow_definitions d
        WHERE d.id = COALESCE(NEW.definition_id, (
                SELECT p.id FROM workflow_definitions p
                WHERE p.workflow_id = NEW.workflow_id AND p.version_status = 'published'))
          AND jsonb_typeof(d.workflow_configurations->'quality_review') = 'object'
          AND d.workflow_configurations->'quality_review'->'enabled' = 'true'::jsonb
      ) THEN
        INSERT INTO quality_reviews (run_id, organization_id, workflow_id)
        VALUES (NEW.id, NEW.organization_id, NEW.workflow_id)
        ON CONFLICT (run_id) DO NOTHING;
      END IF;
      RETURN NULL;
    END $$`
  yield* sql`ALTER TABLE agent_tests ADD COLUMN interrupts boolean NOT NULL DEFAULT false`
  yield* sql`DROP INDEX runs_test_conversations`
  yield* sql`
    CREATE INDEX runs_test_conversations ON runs (organization_id, created_at) WHERE mode IN ('testchat', 'testcall')`
})
