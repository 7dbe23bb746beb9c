import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { DURATION_BUCKET_SECONDS } from "../../../src/usage/durationRollup.ts"

/**
 * A run that changes (its call ends: duration, tokens, disposition) moves its usage from the rows
 * of what it was to the rows of what it is in one upsert per rollup, old and new summed per row:
 * a row that keeps the run gets only the difference. Before, each change took the run out of every
 * row and put it back (fourteen daily and two monthly row writes per change, on rows every call
 * of the organization updates); now seven and one, fewer when little changed.
 */
export const usageRollupMoves = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`
    CREATE FUNCTION run_daily_usage_move(o runs, n runs) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO run_daily_usage AS u (organization_id, dimension, value, day, direction, channel, disposition,
                                        runs, duration_seconds, service_tokens)
      SELECT d.organization_id, d.dimension, d.value, d.day, min(d.direction), min(d.channel), min(d.disposition),
             sum(d.runs), sum(d.duration_seconds), sum(d.service_tokens)
      FROM (
        SELECT o.organization_id, k.dimension, k.value, (o.created_at AT TIME ZONE 'UTC')::date AS day,
               CASE WHEN k.dimension = 'profile' THEN o.direction END AS direction,
               CASE WHEN k.dimension = 'profile' THEN o.channel END AS channel,
               CASE WHEN k.dimension = 'profile' THEN o.disposition END AS disposition,
               -1 AS runs, -1 * o.duration_seconds AS duration_seconds, -1 * o.service_tokens AS service_tokens
        FROM (VALUES ('all', ''), ('workflow', o.workflow_id::text), ('campaign', o.campaign_id::text),
                     ('disposition', o.disposition), ('direction', o.direction), ('channel', o.channel),
                     ('profile', o.direction || '/' || o.channel || '/' || coalesce('=' || o.disposition, '')))
             AS k (dimension, value)
        WHERE k.value IS NOT NULL
        UNION ALL
        SELECT n.organization_id, k.dimension, k.value, (n.created_at AT TIME ZONE 'UTC')::date AS day,
               CASE WHEN k.dimension = 'profile' THEN n.direction END AS direction,
               CASE WHEN k.dimension = 'profile' THEN n.channel END AS channel,
               CASE WHEN k.dimension = 'profile' THEN n.disposition END AS disposition,
               1 AS runs, 1 * n.duration_seconds AS duration_seconds, 1 * n.service_tokens AS service_tokens
        FROM (VALUES ('all', ''), ('workflow', n.workflow_id::text), ('campaign', n.campaign_id::text),
                     ('disposition', n.disposition), ('direction', n.direction), ('channel', n.channel),
                     ('profile', n.direction || '/' || n.channel || '/' || coalesce('=' || n.disposition, '')))
             AS k (dimension, value)
        WHERE k.value IS NOT NULL
      ) AS d
      GROUP BY d.organization_id, d.dimension, d.value, d.day
      HAVING sum(d.runs) <> 0 OR sum(d.duration_seconds) <> 0 OR sum(d.service_tokens) <> 0
      -- The organization's 'all' row first, as run_daily_usage_add takes it: every writer queues on it, none deadlocks.
      ORDER BY d.dimension <> 'all', d.dimension, d.value, d.day
      ON CONFLICT (organization_id, dimension, value, day) DO UPDATE
        SET runs = u.runs + EXCLUDED.runs,
            duration_seconds = u.duration_seconds + EXCLUDED.duration_seconds,
            service_tokens = u.service_tokens + EXCLUDED.service_tokens;
    END $$`)
  yield* sql.unsafe(`
    CREATE FUNCTION run_monthly_usage_move(o runs, n runs) RETURNS void LANGUAGE plpgsql AS $$
    BEGIN
      INSERT INTO run_monthly_usage AS u (organization_id, month, duration_bucket, direction, channel,
                                          disposition_key, disposition, runs, duration_seconds, service_tokens)
      SELECT d.organization_id, d.month, d.bucket, d.direction, d.channel, d.disposition_key, min(d.disposition),
             sum(d.runs), sum(d.duration_seconds), sum(d.service_tokens)
      FROM (
        SELECT o.organization_id, date_trunc('month', o.created_at AT TIME ZONE 'UTC')::date AS month,
               floor(o.duration_seconds / ${DURATION_BUCKET_SECONDS}.0)::integer AS bucket, o.direction, o.channel,
               coalesce('=' || o.disposition, '') AS disposition_key, o.disposition,
               -1 AS runs, -1 * o.duration_seconds AS duration_seconds, -1 * o.service_tokens AS service_tokens
        UNION ALL
        SELECT n.organization_id, date_trunc('month', n.created_at AT TIME ZONE 'UTC')::date AS month,
               floor(n.duration_seconds / ${DURATION_BUCKET_SECONDS}.0)::integer AS bucket, n.direction, n.channel,
               coalesce('=' || n.disposition, '') AS disposition_key, n.disposition,
               1 AS runs, 1 * n.duration_seconds AS duration_seconds, 1 * n.service_tokens AS service_tokens
      ) AS d
      GROUP BY d.organization_id, d.month, d.bucket, d.direction, d.channel, d.disposition_key
      HAVING sum(d.runs) <> 0 OR sum(d.duration_seconds) <> 0 OR sum(d.service_tokens) <> 0
      ON CONFLICT (organization_id, month, duration_bucket, direction, channel, disposition_key) DO UPDATE
        SET runs = u.runs + EXCLUDED.runs,
            duration_seconds = u.duration_seconds + EXCLUDED.duration_seconds,
            service_tokens = u.service_tokens + EXCLUDED.service_tokens;
    END $$`)
  // The triggers (and their column lists) stay; an update now moves the run instead of removing and re-adding it.
  yield* sql.unsafe(`
    CREATE OR REPLACE FUNCTION runs_track_daily_usage() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'UPDATE' THEN
        PERFORM run_daily_usage_move(OLD, NEW);
        PERFORM run_monthly_usage_move(OLD, NEW);
      ELSIF TG_OP = 'DELETE' THEN
        PERFORM run_daily_usage_add(OLD, -1);
        PERFORM run_monthly_usage_add(OLD, -1);
      ELSE
        PERFORM run_daily_usage_add(NEW, 1);
        PERFORM run_monthly_usage_add(NEW, 1);
      END IF;
      RETURN NULL;
    END $$`)
})
