import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * One row per call or chat. Everything a report filters or sorts on is a real column (see
 * docs/architecture.md, "Runs and conversations"); the JSON columns hold what is only ever displayed.
 */
export const runs = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE runs (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workflow_id bigint NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
      definition_id bigint REFERENCES workflow_definitions (id) ON DELETE SET NULL,
      version_number integer,
      name text NOT NULL,
      channel text NOT NULL CHECK (channel IN ('telephony', 'web', 'chat')),
      mode text NOT NULL,
      direction text NOT NULL CHECK (direction IN ('inbound', 'outbound')),
      state text NOT NULL DEFAULT 'initialized' CHECK (state IN ('initialized', 'running', 'completed', 'failed')),
      caller_number text,
      called_number text,
      campaign_id bigint,
      contact_id bigint,
      disposition text,
      end_reason text,
      error text,
      initial_context jsonb NOT NULL DEFAULT '{}',
      gathered_context jsonb NOT NULL DEFAULT '{}',
      transcript jsonb NOT NULL DEFAULT '[]',
      prompt_tokens bigint NOT NULL DEFAULT 0,
      completion_tokens bigint NOT NULL DEFAULT 0,
      service_tokens bigint NOT NULL DEFAULT 0,
      tts_characters bigint NOT NULL DEFAULT 0,
      stt_seconds double precision NOT NULL DEFAULT 0,
      duration_seconds integer NOT NULL DEFAULT 0,
      recording_key text,
      transcript_key text,
      started_at timestamptz,
      ended_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX runs_organization_created ON runs (organization_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX runs_workflow_created ON runs (workflow_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX runs_campaign ON runs (campaign_id) WHERE campaign_id IS NOT NULL`
})
