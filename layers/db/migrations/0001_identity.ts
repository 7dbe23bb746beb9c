import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const identity = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE organizations (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      name text NOT NULL,
      timezone text NOT NULL DEFAULT 'UTC',
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE users (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      email text NOT NULL,
      name text NOT NULL DEFAULT '',
      password_hash text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX users_email_key ON users (lower(email))`
  yield* sql`
    CREATE TABLE memberships (
      user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      role text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (user_id, organization_id)
    )`
  yield* sql`CREATE INDEX memberships_organization ON memberships (organization_id)`
  yield* sql`
    CREATE TABLE sessions (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      user_id bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      token_hash text NOT NULL UNIQUE,
      created_at timestamptz NOT NULL DEFAULT now(),
      expires_at timestamptz NOT NULL,
      revoked_at timestamptz
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      created_by bigint NOT NULL REFERENCES users (id) ON DELETE CASCADE,
      name text NOT NULL,
      key_prefix text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      scopes text[],
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz,
      last_used_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_organization ON api_keys (organization_id, id)`
  yield* sql`
    CREATE TABLE login_failures (
      email_key text PRIMARY KEY,
      failures integer NOT NULL,
      window_started_at timestamptz NOT NULL,
      locked_until timestamptz
    )`
})
