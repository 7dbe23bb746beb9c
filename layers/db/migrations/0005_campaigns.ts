import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Telephony configurations, campaigns and their contacts. Shaped for the dialing engine: contacts
 * are claimed with `FOR UPDATE SKIP LOCKED` through a partial index on due work, live calls are
 * counted from `campaign_attempts` (so a concurrency slot is a row, never a leaked counter), and a
 * running campaign is leased to one process through `lease_owner` / `lease_expires_at`.
 */
export const campaigns = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE telephony_configurations (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      name text NOT NULL,
      provider text NOT NULL CHECK (provider IN ('twilio', 'vonage', 'telnyx', 'plivo')),
      is_default_outbound boolean NOT NULL DEFAULT false,
      settings jsonb NOT NULL DEFAULT '{}',
      credentials text NOT NULL,
      api_base_url text,
      default_region text,
      inactive boolean NOT NULL DEFAULT false,
      inactive_reason text,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX telephony_configurations_name ON telephony_configurations (organization_id, lower(name))`
  yield* sql`
    CREATE UNIQUE INDEX telephony_configurations_one_default
    ON telephony_configurations (organization_id) WHERE is_default_outbound`
  yield* sql`
    CREATE TABLE phone_numbers (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      telephony_configuration_id bigint NOT NULL REFERENCES telephony_configurations (id) ON DELETE CASCADE,
      address text NOT NULL,
      label text,
      is_active boolean NOT NULL DEFAULT true,
      is_default_caller_id boolean NOT NULL DEFAULT false,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE UNIQUE INDEX phone_numbers_address ON phone_numbers (organization_id, address)`
  yield* sql`CREATE INDEX phone_numbers_configuration ON phone_numbers (telephony_configuration_id, id)`
  yield* sql`
    CREATE UNIQUE INDEX phone_numbers_one_default_caller
    ON phone_numbers (telephony_configuration_id) WHERE is_default_caller_id`
  yield* sql`
    CREATE TABLE campaigns (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workflow_id bigint NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
      telephony_configuration_id bigint REFERENCES telephony_configurations (id) ON DELETE SET NULL,
      name text NOT NULL,
      state text NOT NULL DEFAULT 'created'
        CHECK (state IN ('created', 'running', 'paused', 'completed', 'cancelled', 'failed')),
      source_type text NOT NULL CHECK (source_type IN ('csv')),
      source_id text NOT NULL,
      source_columns jsonb NOT NULL DEFAULT '[]',
      default_region text,
      total_rows integer,
      processed_rows integer NOT NULL DEFAULT 0,
      failed_rows integer NOT NULL DEFAULT 0,
      executed_count integer NOT NULL DEFAULT 0,
      total_queued_count integer NOT NULL DEFAULT 0,
      retry_config jsonb NOT NULL,
      max_concurrency integer CHECK (max_concurrency BETWEEN 1 AND 100),
      rate_limit_per_second integer NOT NULL DEFAULT 1 CHECK (rate_limit_per_second BETWEEN 1 AND 100),
      schedule_config jsonb,
      circuit_breaker jsonb NOT NULL,
      parent_campaign_id bigint REFERENCES campaigns (id) ON DELETE SET NULL,
      redialed_campaign_id bigint REFERENCES campaigns (id) ON DELETE SET NULL,
      logs jsonb NOT NULL DEFAULT '[]',
      warnings jsonb NOT NULL DEFAULT '[]',
      lease_owner text,
      lease_expires_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now(),
      started_at timestamptz,
      completed_at timestamptz
    )`
  yield* sql`CREATE INDEX campaigns_organization ON campaigns (organization_id, id DESC)`
  // The scheduler scans running campaigns whose lease is free or lapsed.
  yield* sql`CREATE INDEX campaigns_running ON campaigns (lease_expires_at) WHERE state = 'running'`
  yield* sql`CREATE INDEX campaigns_telephony ON campaigns (telephony_configuration_id) WHERE telephony_configuration_id IS NOT NULL`
  yield* sql`
    CREATE TABLE campaign_contacts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
      row_number integer NOT NULL,
      phone_number text NOT NULL,
      context jsonb NOT NULL DEFAULT '{}',
      greeting_override jsonb,
      state text NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'dialing', 'completed', 'failed', 'cancelled')),
      attempt_count integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL DEFAULT now(),
      last_outcome text,
      last_attempt_at timestamptz,
      last_run_id bigint,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX campaign_contacts_campaign ON campaign_contacts (campaign_id, id)`
  // What the dialer claims next: due pending contacts, oldest due first, in CSV order.
  yield* sql`
    CREATE INDEX campaign_contacts_due ON campaign_contacts (campaign_id, next_attempt_at, id)
    WHERE state = 'pending'`
  yield* sql`
    CREATE TABLE campaign_attempts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      campaign_id bigint NOT NULL REFERENCES campaigns (id) ON DELETE CASCADE,
      contact_id bigint NOT NULL REFERENCES campaign_contacts (id) ON DELETE CASCADE,
      attempt_number integer NOT NULL CHECK (attempt_number >= 1),
      run_id bigint REFERENCES runs (id) ON DELETE SET NULL,
      provider_call_id text,
      outcome text,
      created_at timestamptz NOT NULL DEFAULT now(),
      deadline_at timestamptz,
      ended_at timestamptz,
      UNIQUE (contact_id, attempt_number)
    )`
  // Live attempts (no end yet) are the concurrency slots, per campaign and per organization.
  yield* sql`CREATE INDEX campaign_attempts_live_campaign ON campaign_attempts (campaign_id) WHERE ended_at IS NULL`
  yield* sql`CREATE INDEX campaign_attempts_live_organization ON campaign_attempts (organization_id, deadline_at) WHERE ended_at IS NULL`
  yield* sql`CREATE INDEX campaign_attempts_run ON campaign_attempts (run_id) WHERE run_id IS NOT NULL`
  yield* sql`CREATE UNIQUE INDEX campaign_attempts_provider_call ON campaign_attempts (provider_call_id) WHERE provider_call_id IS NOT NULL`
  yield* sql`
    ALTER TABLE runs
      ADD CONSTRAINT runs_campaign_fk FOREIGN KEY (campaign_id) REFERENCES campaigns (id) ON DELETE SET NULL,
      ADD CONSTRAINT runs_contact_fk FOREIGN KEY (contact_id) REFERENCES campaign_contacts (id) ON DELETE SET NULL`
  yield* sql`CREATE INDEX runs_contact ON runs (contact_id) WHERE contact_id IS NOT NULL`
})
