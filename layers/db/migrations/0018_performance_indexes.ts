import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { DURATION_BUCKET_SECONDS } from "../../../src/usage/durationRollup.ts"

/**
 * A campaign holds each phone number once. Imports always skipped a repeated number, with a set of
 * every number seen kept in the loading process (memory growing with the file); the database now
 * skips it (`ON CONFLICT DO NOTHING` on this index), so an import's memory no longer depends on the
 * file's length. Every import and redial since 0005 stored distinct numbers, so the index builds
 * on existing data.
 */
export const contactNumbersUnique = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE UNIQUE INDEX campaign_contacts_number ON campaign_contacts (campaign_id, phone_number)`
})

/** Recomputes `run_monthly_usage` from `runs` (the migration's backfill; bulk loaders call it too). */
export const rebuildRunMonthlyUsage = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM run_monthly_usage`
  yield* sql`
    INSERT INTO run_monthly_usage (organization_id, month, duration_bucket, direction, channel, disposition_key,
                                   disposition, runs, duration_seconds, service_tokens)
    SELECT organization_id, date_trunc('month', created_at AT TIME ZONE 'UTC')::date,
           floor(duration_seconds::numeric / ${DURATION_BUCKET_SECONDS})::integer, direction, channel,
           coalesce('=' || disposition, ''), min(disposition), count(*), sum(duration_seconds), sum(service_tokens)
    FROM runs
    GROUP BY 1, 2, 3, 4, 5, 6`
})

/**
 * Monthly totals per duration bucket × direction × channel × disposition, kept exact by the same
 * trigger as the daily rollup: what a report filtering on duration sums (src/usage/durationRollup.ts).
 * The report counts runs of partial months and partial buckets from `runs`; the indexes it reads
 * them through hold every column those filters test, so they are read from the index alone. The
 * agent's and campaign's indexes hold them too, and each other's column: the planner cannot tell that
 * a campaign's runs are mostly one agent's, and combined two bitmaps for ~0.1 s instead.
 */
export const usageByDuration = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE run_monthly_usage (
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      month date NOT NULL,
      duration_bucket integer NOT NULL,
      direction text NOT NULL,
      channel text NOT NULL,
      -- '=' and the disposition, or '' for none: unlike the nullable column, a key.
      disposition_key text NOT NULL,
      disposition text,
      runs bigint NOT NULL,
      duration_seconds bigint NOT NULL,
      service_tokens bigint NOT NULL,
      PRIMARY KEY (organization_id, month, duration_bucket, direction, channel, disposition_key)
    )`
  yield* sql.unsafe(`
    CREATE FUNCTION run_monthly_usage_add(r runs, sign integer) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      usage_month date := date_trunc('month', r.created_at AT TIME ZONE 'UTC')::date;
      bucket integer := floor(r.duration_seconds / ${DURATION_BUCKET_SECONDS}.0)::integer;
    BEGIN
      IF sign > 0 THEN
        INSERT INTO run_monthly_usage AS u (organization_id, month, duration_bucket, direction, channel,
                                            disposition_key, disposition, runs, duration_seconds, service_tokens)
        VALUES (r.organization_id, usage_month, bucket, r.direction, r.channel, coalesce('=' || r.disposition, ''),
                r.disposition, 1, r.duration_seconds, r.service_tokens)
        ON CONFLICT (organization_id, month, duration_bucket, direction, channel, disposition_key) DO UPDATE
          SET runs = u.runs + 1,
              duration_seconds = u.duration_seconds + EXCLUDED.duration_seconds,
              service_tokens = u.service_tokens + EXCLUDED.service_tokens;
      ELSE
        -- Only decrements: when the organization is being deleted its rows may be gone already.
        UPDATE run_monthly_usage AS u
        SET runs = u.runs - 1,
            duration_seconds = u.duration_seconds - r.duration_seconds,
            service_tokens = u.service_tokens - r.service_tokens
        WHERE u.organization_id = r.organization_id AND u.month = usage_month AND u.duration_bucket = bucket
          AND u.direction = r.direction AND u.channel = r.channel
          AND u.disposition_key = coalesce('=' || r.disposition, '');
      END IF;
    END $$`)
  // The trigger (and its column list, which covers every column above) stays; its function adds the month.
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION runs_track_daily_usage() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') THEN
        PERFORM run_daily_usage_add(OLD, -1);
        PERFORM run_monthly_usage_add(OLD, -1);
      END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM run_daily_usage_add(NEW, 1);
        PERFORM run_monthly_usage_add(NEW, 1);
      END IF;
      RETURN NULL;
    END $$`)
  yield* rebuildRunMonthlyUsage
  const covering = "duration_seconds, service_tokens, direction, channel, disposition"
  yield* sql`DROP INDEX runs_organization_created`
  yield* sql.unsafe(`
    CREATE INDEX runs_organization_created ON runs (organization_id, created_at DESC, id DESC) INCLUDE (${covering})`)
  yield* sql`DROP INDEX runs_organization_duration`
  yield* sql.unsafe(`
    CREATE INDEX runs_organization_duration ON runs (organization_id, duration_seconds, id)
    INCLUDE (service_tokens, created_at, direction, channel, disposition)`)
  yield* sql`DROP INDEX runs_workflow_created`
  yield* sql.unsafe(`
    CREATE INDEX runs_workflow_created ON runs (workflow_id, created_at DESC, id DESC)
    INCLUDE (organization_id, campaign_id, ${covering})`)
  yield* sql`DROP INDEX runs_campaign_created`
  yield* sql.unsafe(`
    CREATE INDEX runs_campaign_created ON runs (campaign_id, created_at DESC, id DESC)
    INCLUDE (organization_id, workflow_id, ${covering}) WHERE campaign_id IS NOT NULL`)
})

export const performanceIndexes = Effect.gen(function*() {
  yield* contactNumbersUnique
  yield* usageByDuration
})
