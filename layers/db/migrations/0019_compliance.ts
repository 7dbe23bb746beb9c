import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Calling rules campaigns and single calls follow (README "Compliance"). An organization's
 * do-not-call list is keyed by (organization, number): the dialer's claim asks it once per contact
 * it takes, by primary key. A contact the rules keep from being dialled is `skipped`, with why, so
 * it never waits in `pending` and a campaign still completes; one waiting for its local calling
 * hours stays `pending` with the reason `outside_local_hours`. A contact's `time_zones` are the
 * zones it may be in (sorted, space-separated), decided at import.
 */
export const compliance = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE do_not_call_numbers (
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      phone_number text NOT NULL,
      reason text,
      source text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (organization_id, phone_number)
    )`
  yield* sql`
    ALTER TABLE campaign_contacts
      DROP CONSTRAINT campaign_contacts_state_check,
      ADD CONSTRAINT campaign_contacts_state_check
        CHECK (state IN ('pending', 'dialing', 'completed', 'failed', 'cancelled', 'skipped')),
      ADD COLUMN skip_reason text CHECK (skip_reason IN ('dnc', 'outside_local_hours', 'frequency_cap')),
      ADD COLUMN time_zones text`
  // The calling rules of an organization (none: the defaults, all off), and a campaign's own
  // calling hours; `contact_zones` are the distinct zone sets of its contacts, whose windows the
  // claim works out once per set rather than once per contact.
  yield* sql`
    CREATE TABLE organization_compliance_policies (
      organization_id bigint PRIMARY KEY REFERENCES organizations (id) ON DELETE CASCADE,
      calling_hours jsonb NOT NULL,
      frequency_caps jsonb NOT NULL DEFAULT '{"per_day": null, "per_7_days": null}',
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    ALTER TABLE campaigns
      ADD COLUMN calling_hours jsonb,
      ADD COLUMN contact_zones jsonb NOT NULL DEFAULT '[]'`

  // Frequency caps count an organization's outbound calls to a number over the last 7 days, every
  // campaign's and single call's (each has a run), inside the claim.
  yield* sql`
    CREATE INDEX runs_outbound_number ON runs (organization_id, called_number, created_at)
    WHERE direction = 'outbound' AND called_number IS NOT NULL`
  // A call that ends with the disposition `dnc` ("stop calling me") puts the number it called on
  // the list, whichever path (voice, chat, any process) recorded the disposition.
  yield* sql`
    CREATE FUNCTION talkgraph_disposition_do_not_call() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO do_not_call_numbers (organization_id, phone_number, reason, source)
      VALUES (NEW.organization_id, NEW.called_number, 'Call ' || NEW.id || ' ended with disposition dnc', 'disposition')
      ON CONFLICT (organization_id, phone_number) DO NOTHING;
      RETURN NEW;
    END $$`
  yield* sql`
    CREATE TRIGGER runs_disposition_do_not_call AFTER UPDATE OF disposition ON runs
    FOR EACH ROW WHEN (lower(NEW.disposition) = 'dnc' AND OLD.disposition IS DISTINCT FROM NEW.disposition
                       AND NEW.direction = 'outbound' AND NEW.called_number IS NOT NULL)
    EXECUTE FUNCTION talkgraph_disposition_do_not_call()`
})
