import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Indexes behind the usage report (`src/usage/`): every filter and both sort orders reach rows
 * through an index on a real column, never through JSON. Each index leads with the tenant (or a
 * column that implies it) and ends with the sort key and `id`, the report's tie-break, so a page is
 * read in order and stops at its LIMIT.
 */
export const usageIndexes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Totals (count, seconds, tokens) over an organization's date range come from the index alone.
  yield* sql`DROP INDEX IF EXISTS runs_organization_created`
  yield* sql`
    CREATE INDEX runs_organization_created ON runs (organization_id, created_at DESC, id DESC)
    INCLUDE (duration_seconds, service_tokens)`
  yield* sql`CREATE INDEX runs_organization_duration ON runs (organization_id, duration_seconds, id) INCLUDE (service_tokens)`
  yield* sql`CREATE INDEX runs_organization_disposition ON runs (organization_id, disposition, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX runs_organization_direction ON runs (organization_id, direction, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX runs_organization_channel ON runs (organization_id, channel, created_at DESC, id DESC)`
  yield* sql`DROP INDEX IF EXISTS runs_campaign`
  yield* sql`CREATE INDEX runs_campaign_created ON runs (campaign_id, created_at DESC, id DESC) WHERE campaign_id IS NOT NULL`
  // Substring search on numbers needs trigrams; a server without pg_trgm still answers, by scanning.
  const [trgm] = yield* sql<{ available: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm')
      OR (EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'pg_trgm')
          AND has_database_privilege(current_database(), 'CREATE')) AS available`
  if (trgm?.available) {
    yield* sql`CREATE EXTENSION IF NOT EXISTS pg_trgm`
    yield* sql`CREATE INDEX runs_caller_number_trgm ON runs USING gin (caller_number gin_trgm_ops)`
    yield* sql`CREATE INDEX runs_called_number_trgm ON runs USING gin (called_number gin_trgm_ops)`
  }
  yield* runDailyUsage
})

/**
 * Recomputes `run_daily_usage` from `runs` (the migration's backfill; bulk loaders that disable
 * the trigger call it afterwards).
 */
export const rebuildRunDailyUsage = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`DELETE FROM run_daily_usage`
  yield* sql`
    INSERT INTO run_daily_usage (organization_id, dimension, value, day, direction, channel, disposition,
                                 runs, duration_seconds, service_tokens)
    SELECT r.organization_id, k.dimension, k.value, (r.created_at AT TIME ZONE 'UTC')::date,
           min(k.direction), min(k.channel), min(k.disposition),
           count(*), sum(r.duration_seconds), sum(r.service_tokens)
    FROM runs r
    CROSS JOIN LATERAL (VALUES
      ('all', '', NULL, NULL, NULL),
      ('workflow', r.workflow_id::text, NULL, NULL, NULL),
      ('campaign', r.campaign_id::text, NULL, NULL, NULL),
      ('disposition', r.disposition, NULL, NULL, NULL),
      ('direction', r.direction, NULL, NULL, NULL),
      ('channel', r.channel, NULL, NULL, NULL),
      ('profile', r.direction || '/' || r.channel || '/' || coalesce('=' || r.disposition, ''), r.direction, r.channel, r.disposition)
    ) AS k (dimension, value, direction, channel, disposition)
    WHERE k.value IS NOT NULL
    GROUP BY 1, 2, 3, 4`
})

/**
 * Daily totals per organization, overall and per value of each low-cardinality filter (agent,
 * campaign, disposition, direction, channel) and per direction × channel × disposition (for those
 * filters combined), kept exact by a trigger in the same transaction
 * as the run change. The report sums whole UTC days from here and counts only the partial days
 * at the ends of a date range from `runs`, so totals over a million runs read a few hundred rows.
 */
export const runDailyUsage = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE run_daily_usage (
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      dimension text NOT NULL
        CHECK (dimension IN ('all', 'workflow', 'campaign', 'disposition', 'direction', 'channel', 'profile')),
      value text NOT NULL,
      day date NOT NULL,
      -- Set on 'profile' rows only: one row per direction × channel × disposition, for combined filters.
      direction text,
      channel text,
      disposition text,
      runs bigint NOT NULL,
      duration_seconds bigint NOT NULL,
      service_tokens bigint NOT NULL,
      PRIMARY KEY (organization_id, dimension, value, day)
    )`
  // Removing a run only decrements existing rows: when its organization is being deleted the
  // cascade may already have removed them, and inserting would then violate the foreign key.
  yield* sql.unsafe(`
    CREATE FUNCTION run_daily_usage_add(r runs, sign integer) RETURNS void LANGUAGE plpgsql AS $$
    DECLARE
      usage_day date := (r.created_at AT TIME ZONE 'UTC')::date;
    BEGIN
      IF sign > 0 THEN
        INSERT INTO run_daily_usage AS u (organization_id, dimension, value, day, direction, channel, disposition,
                                          runs, duration_seconds, service_tokens)
        SELECT r.organization_id, k.dimension, k.value, usage_day,
               CASE WHEN k.dimension = 'profile' THEN r.direction END,
               CASE WHEN k.dimension = 'profile' THEN r.channel END,
               CASE WHEN k.dimension = 'profile' THEN r.disposition END,
               1, r.duration_seconds, r.service_tokens
        FROM (VALUES ('all', ''), ('workflow', r.workflow_id::text), ('campaign', r.campaign_id::text),
                     ('disposition', r.disposition), ('direction', r.direction), ('channel', r.channel),
                     ('profile', r.direction || '/' || r.channel || '/' || coalesce('=' || r.disposition, '')))
             AS k (dimension, value)
        WHERE k.value IS NOT NULL
        ON CONFLICT (organization_id, dimension, value, day) DO UPDATE
          SET runs = u.runs + 1,
              duration_seconds = u.duration_seconds + EXCLUDED.duration_seconds,
              service_tokens = u.service_tokens + EXCLUDED.service_tokens;
      ELSE
        UPDATE run_daily_usage AS u
        SET runs = u.runs - 1,
            duration_seconds = u.duration_seconds - r.duration_seconds,
            service_tokens = u.service_tokens - r.service_tokens
        FROM (VALUES ('all', ''), ('workflow', r.workflow_id::text), ('campaign', r.campaign_id::text),
                     ('disposition', r.disposition), ('direction', r.direction), ('channel', r.channel),
                     ('profile', r.direction || '/' || r.channel || '/' || coalesce('=' || r.disposition, '')))
             AS k (dimension, value)
        WHERE u.organization_id = r.organization_id AND u.dimension = k.dimension AND u.value = k.value
          AND u.day = usage_day;
      END IF;
    END $$`)
  yield* sql.unsafe(`
    CREATE FUNCTION runs_track_daily_usage() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP IN ('UPDATE', 'DELETE') THEN PERFORM run_daily_usage_add(OLD, -1); END IF;
      IF TG_OP IN ('INSERT', 'UPDATE') THEN PERFORM run_daily_usage_add(NEW, 1); END IF;
      RETURN NULL;
    END $$`)
  yield* sql`
    CREATE TRIGGER runs_daily_usage AFTER INSERT OR DELETE ON runs
    FOR EACH ROW EXECUTE FUNCTION runs_track_daily_usage()`
  // Runs are updated often while a call is live; only changes to what the totals group or sum count.
  yield* sql`
    CREATE TRIGGER runs_daily_usage_update
    AFTER UPDATE OF organization_id, workflow_id, campaign_id, disposition, direction, channel,
                    duration_seconds, service_tokens, created_at ON runs
    FOR EACH ROW
    WHEN ((OLD.organization_id, OLD.workflow_id, OLD.campaign_id, OLD.disposition, OLD.direction, OLD.channel,
           OLD.duration_seconds, OLD.service_tokens, OLD.created_at)
          IS DISTINCT FROM
          (NEW.organization_id, NEW.workflow_id, NEW.campaign_id, NEW.disposition, NEW.direction, NEW.channel,
           NEW.duration_seconds, NEW.service_tokens, NEW.created_at))
    EXECUTE FUNCTION runs_track_daily_usage()`
  yield* rebuildRunDailyUsage
})
