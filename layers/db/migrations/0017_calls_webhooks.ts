import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Single outbound calls and outgoing webhooks.
 *
 * A single call (`calls`) is placed like a campaign's: its attempt is a `campaign_attempts` row
 * without a campaign or contact, so the organization's live-call count, the carrier callbacks,
 * reconciliation and usage all see it as any other call. The request is kept with its idempotency
 * key (unique per organization) and the fingerprint of its body.
 *
 * Webhooks: an organization's endpoints, the events (`webhook_events`) and one delivery per
 * endpoint and event (`webhook_deliveries`, the outbox the delivery worker claims with
 * `FOR UPDATE SKIP LOCKED`), and each attempt's result (`webhook_delivery_attempts`). The events are
 * written by triggers, in the transaction that finished the run or changed the campaign's state,
 * so no code path that ends a run can forget one and none is written for a change that rolled back.
 */
export const callsWebhooks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE campaign_attempts ALTER COLUMN campaign_id DROP NOT NULL, ALTER COLUMN contact_id DROP NOT NULL`
  yield* sql`
    CREATE TABLE calls (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      workflow_id bigint NOT NULL REFERENCES workflows (id) ON DELETE CASCADE,
      use_draft boolean NOT NULL DEFAULT false,
      phone_number text NOT NULL,
      initial_context jsonb NOT NULL DEFAULT '{}',
      telephony_configuration_id bigint REFERENCES telephony_configurations (id) ON DELETE SET NULL,
      from_phone_number_id bigint REFERENCES phone_numbers (id) ON DELETE SET NULL,
      scheduled_at timestamptz,
      state text NOT NULL CHECK (state IN ('scheduled', 'placing', 'placed', 'not_placed')),
      run_id bigint REFERENCES runs (id) ON DELETE SET NULL,
      attempt_id bigint REFERENCES campaign_attempts (id) ON DELETE SET NULL,
      error text,
      idempotency_key text,
      request_fingerprint text NOT NULL,
      source text NOT NULL,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE UNIQUE INDEX calls_idempotency ON calls (organization_id, idempotency_key) WHERE idempotency_key IS NOT NULL`
  yield* sql`CREATE INDEX calls_due ON calls (scheduled_at) WHERE state = 'scheduled'`
  yield* sql`CREATE INDEX calls_run ON calls (run_id) WHERE run_id IS NOT NULL`

  yield* sql`
    CREATE TABLE webhook_endpoints (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      url text NOT NULL,
      description text,
      event_types jsonb NOT NULL,
      secret text NOT NULL,
      previous_secret text,
      previous_secret_expires_at timestamptz,
      enabled boolean NOT NULL DEFAULT true,
      disabled_reason text,
      disabled_at timestamptz,
      failing_since timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX webhook_endpoints_organization ON webhook_endpoints (organization_id, id)`
  yield* sql`
    CREATE TABLE webhook_events (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      type text NOT NULL,
      run_id bigint,
      campaign_id bigint,
      occurred_at timestamptz NOT NULL,
      payload jsonb,
      dedupe_key text UNIQUE
    )`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      endpoint_id bigint NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
      event_id bigint NOT NULL REFERENCES webhook_events (id) ON DELETE CASCADE,
      state text NOT NULL DEFAULT 'pending' CHECK (state IN ('pending', 'delivered', 'failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      retry_until timestamptz NOT NULL,
      created_at timestamptz NOT NULL,
      delivered_at timestamptz,
      last_status integer,
      last_error text,
      UNIQUE (endpoint_id, event_id)
    )`
  // What the worker claims next: pending deliveries, the most overdue first.
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE state = 'pending'`
  yield* sql`CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC)`
  yield* sql`
    CREATE TABLE webhook_delivery_attempts (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      delivery_id bigint NOT NULL REFERENCES webhook_deliveries (id) ON DELETE CASCADE,
      attempted_at timestamptz NOT NULL,
      status integer,
      latency_ms integer NOT NULL,
      error text
    )`
  yield* sql`CREATE INDEX webhook_delivery_attempts_delivery ON webhook_delivery_attempts (delivery_id, id)`

  // One event and a delivery to every enabled endpoint of the organization that asked for its type.
  // The retry window starts now(): the transaction's time, which the worker compares with Clock.
  yield* sql`
    CREATE FUNCTION talkgraph_webhook_event(org bigint, kind text, run bigint, campaign bigint, dedupe text)
    RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      event_id bigint;
      -- Milliseconds, as the worker's Clock counts: a microsecond past it would not yet be due.
      at timestamptz := date_trunc('milliseconds', now());
    BEGIN
      IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE organization_id = org AND enabled
                     AND event_types ? kind) THEN
        RETURN;
      END IF;
      INSERT INTO webhook_events (organization_id, type, run_id, campaign_id, occurred_at, dedupe_key)
      VALUES (org, kind, run, campaign, at, dedupe)
      ON CONFLICT (dedupe_key) DO NOTHING
      RETURNING id INTO event_id;
      IF event_id IS NULL THEN
        RETURN;
      END IF;
      INSERT INTO webhook_deliveries (organization_id, endpoint_id, event_id, next_attempt_at, retry_until, created_at)
      SELECT org, e.id, event_id, at, at + interval '24 hours', at
      FROM webhook_endpoints e
      WHERE e.organization_id = org AND e.enabled AND e.event_types ? kind;
      PERFORM pg_notify('talkgraph_webhooks', '');
    END $$`
  // A run is finished once it has ended and no live session holds it (a carrier's final callback
  // can end a call's run before the session stores its transcript): whichever comes last fires.
  yield* sql`
    CREATE FUNCTION talkgraph_run_finished() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM talkgraph_webhook_event(NEW.organization_id, 'run.completed', NEW.id, NEW.campaign_id,
                                      'run.completed:' || NEW.id);
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER runs_finished_webhook AFTER UPDATE ON runs
    FOR EACH ROW WHEN (NEW.ended_at IS NOT NULL AND NEW.busy_token IS NULL
                       AND (OLD.ended_at IS NULL OR OLD.busy_token IS NOT NULL))
    EXECUTE FUNCTION talkgraph_run_finished()`
  yield* sql`
    CREATE FUNCTION talkgraph_campaign_webhook() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF NEW.state = 'running' AND OLD.state = 'created' THEN
        PERFORM talkgraph_webhook_event(NEW.organization_id, 'campaign.started', NULL, NEW.id, 'campaign.started:' || NEW.id);
      ELSIF NEW.state = 'paused' THEN
        PERFORM talkgraph_webhook_event(NEW.organization_id, 'campaign.paused', NULL, NEW.id, NULL);
      ELSIF NEW.state = 'completed' THEN
        PERFORM talkgraph_webhook_event(NEW.organization_id, 'campaign.completed', NULL, NEW.id, 'campaign.completed:' || NEW.id);
      END IF;
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER campaigns_state_webhook AFTER UPDATE OF state ON campaigns
    FOR EACH ROW WHEN (OLD.state IS DISTINCT FROM NEW.state) EXECUTE FUNCTION talkgraph_campaign_webhook()`
})
