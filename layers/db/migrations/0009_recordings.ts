import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Recorded clips for greetings, greeting overrides and transition speech. The uploaded file is
 * kept (`storage_key`) beside the two forms calls play, converted once at registration
 * (`ulaw_8k_key`, `pcm_16k_key`), so no call ever transcodes. Graphs and contact rows name a clip
 * by `recording_id`, unique in its organization.
 */
export const recordings = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE workflow_recordings (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      recording_id text NOT NULL,
      workflow_id bigint REFERENCES workflows (id) ON DELETE SET NULL,
      label text NOT NULL,
      transcript text,
      storage_key text NOT NULL,
      storage_backend text NOT NULL,
      ulaw_8k_key text NOT NULL,
      pcm_16k_key text NOT NULL,
      source_format text NOT NULL,
      source_sample_rate integer NOT NULL,
      source_channels integer NOT NULL,
      duration_ms integer NOT NULL,
      size_bytes bigint NOT NULL,
      created_by bigint REFERENCES users (id) ON DELETE SET NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX workflow_recordings_public_id ON workflow_recordings (organization_id, recording_id)`
  yield* sql`CREATE INDEX workflow_recordings_workflow ON workflow_recordings (organization_id, workflow_id, id)`
})
