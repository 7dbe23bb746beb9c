import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const workflows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE workflows (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      created_by bigint REFERENCES users (id) ON DELETE SET NULL,
      workflow_uuid uuid NOT NULL UNIQUE,
      name text NOT NULL,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
      call_disposition_codes jsonb NOT NULL DEFAULT '{"disposition_codes": []}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX workflows_organization ON workflows (organization_id, status, id)`
  yield* sql`
    CREATE TABLE workflow_definitions (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      workflow_id bigint NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
      version_number integer NOT NULL,
      version_status text NOT NULL CHECK (version_status IN ('draft', 'published', 'archived')),
      workflow_definition jsonb NOT NULL,
      template_context_variables jsonb NOT NULL DEFAULT '{}',
      workflow_configurations jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz,
      UNIQUE (workflow_id, version_number)
    )`
  // At most one draft and one published version per workflow, enforced by the database.
  yield* sql`CREATE UNIQUE INDEX workflow_definitions_one_draft ON workflow_definitions (workflow_id) WHERE version_status = 'draft'`
  yield* sql`CREATE UNIQUE INDEX workflow_definitions_one_published ON workflow_definitions (workflow_id) WHERE version_status = 'published'`
})
