import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const tools = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // `secrets` is the sealed JSON of the secret fields (SecretBox); `public_data` what may be shown.
  // `bound_host` is the one host its secrets may go to: a stored credential never follows a changed host.
  yield* sql`
    CREATE TABLE credentials (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      credential_uuid uuid NOT NULL UNIQUE,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      created_by bigint REFERENCES users (id) ON DELETE SET NULL,
      name text NOT NULL,
      description text,
      credential_type text NOT NULL
        CHECK (credential_type IN ('none', 'api_key', 'bearer_token', 'basic_auth', 'custom_header')),
      public_data jsonb NOT NULL DEFAULT '{}',
      secrets text NOT NULL,
      bound_host text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz,
      CONSTRAINT credentials_name UNIQUE (organization_id, name)
    )`
  yield* sql`
    CREATE TABLE tools (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      tool_uuid uuid NOT NULL UNIQUE,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      created_by bigint REFERENCES users (id) ON DELETE SET NULL,
      name text NOT NULL,
      description text,
      category text NOT NULL,
      icon text,
      icon_color text,
      status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
      definition jsonb NOT NULL,
      credential_id bigint REFERENCES credentials (id) ON DELETE RESTRICT,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz
    )`
  yield* sql`CREATE INDEX tools_organization ON tools (organization_id, status, id)`
})
