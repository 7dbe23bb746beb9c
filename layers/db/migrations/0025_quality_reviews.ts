import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * One quality review per finished run of an agent whose `quality_review` setting is on. The row is
 * made by a trigger in the same transaction that finishes the run, whichever code path finishes it
 * (a call's outcome, a chat's end, the idle sweeper), so a run that finished while no reviewer was
 * running is still reviewed once one starts. "Finished" is the `run.completed` webhook's moment
 * (0017): ended, and no live session still holding the run to store its transcript. Agent test conversations (`mode = 'testchat'`) are
 * not reviewed: they are rehearsals, not conversations with callers.
 */
export const qualityReviews = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE quality_reviews (
      run_id bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workflow_id bigint NOT NULL,
      status text NOT NULL DEFAULT 'pending'
        CHECK (status IN ('pending', 'reviewing', 'reviewed', 'skipped', 'failed')),
      skip_reason text,
      failure text,
      rubric text,
      model text,
      score integer CHECK (score BETWEEN 1 AND 10),
      tags jsonb NOT NULL DEFAULT '[]',
      sentiment text,
      summary text,
      result jsonb,
      prompt_tokens bigint NOT NULL DEFAULT 0,
      completion_tokens bigint NOT NULL DEFAULT 0,
      reviewer text,
      claimed_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      reviewed_at timestamptz
    )`
  yield* sql`CREATE INDEX quality_reviews_waiting ON quality_reviews (run_id) WHERE status IN ('pending', 'reviewing')`
  yield* sql`CREATE INDEX quality_reviews_agent_day ON quality_reviews (organization_id, workflow_id, reviewed_at)`
  yield* sql`
    CREATE FUNCTION talkgraph_run_finished_quality_review() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.mode <> 'testchat' AND EXISTS (
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
  yield* sql`
    CREATE TRIGGER runs_finished_quality_review_insert AFTER INSERT ON runs
    FOR EACH ROW WHEN (NEW.ended_at IS NOT NULL AND NEW.busy_token IS NULL)
    EXECUTE FUNCTION talkgraph_run_finished_quality_review()`
  yield* sql`
    CREATE TRIGGER runs_finished_quality_review_update AFTER UPDATE ON runs
    FOR EACH ROW WHEN (NEW.ended_at IS NOT NULL AND NEW.busy_token IS NULL
                       AND (OLD.ended_at IS NULL OR OLD.busy_token IS NOT NULL))
    EXECUTE FUNCTION talkgraph_run_finished_quality_review()`
})
