import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { ActorCampaign, CallProgress } from "../../../services/DialerRepo.ts"
import { logEntry } from "../../../src/campaigns/campaignLog.ts"
import type { CampaignId, RunId, TelephonyConfigId } from "../../../src/domain/ids.ts"
import { retryOnDeadlock } from "./deadlockRetry.ts"

const isoOf = (now: number) => new Date(now)

export const makeDialerRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const loadCampaign = (id: number) =>
    Effect.map(
      sql<ActorCampaign>`
        SELECT id, organization_id, workflow_id, state, lease_owner, rate_limit_per_second, max_concurrency, retry_config,
               schedule_config, circuit_breaker, telephony_configuration_id, caller_id_pool, breaker_reset_at, updated_at
        FROM campaigns WHERE id = ${id}`,
      (rows) => rows[0]
    )

  const dialPlanDefinition = (workflowId: number) =>
    Effect.map(
      sql<{ id: number; version_number: number }>`
        SELECT id, version_number FROM workflow_definitions
        WHERE workflow_id = ${workflowId} AND version_status IN ('published', 'draft')
        ORDER BY (version_status = 'published') DESC, version_number DESC LIMIT 1`,
      (rows) => rows[0]
    )

  /** Claim times of the campaign's latest attempts, to rebuild the rate log after a (re)start or takeover. */
  const recentDispatches = (campaignId: CampaignId, count: number) =>
    Effect.map(
      sql<{ created_at: Date }>`
        SELECT created_at FROM campaign_attempts WHERE campaign_id = ${campaignId} ORDER BY created_at DESC LIMIT ${count}`,
      (rows) => rows.map((row) => row.created_at.getTime())
    )

  /**
   * The carrier's call ids of attempts it accepted, in one statement however many there are. An
   * attempt a signed callback already tied to a call keeps it; those tied to another call than the
   * carrier's reply names are returned (a callback about a foreign call won the race).
   */
  const recordPlaced = (placed: ReadonlyArray<{ readonly attemptId: number; readonly providerCallId: string }>) =>
    sql<{ run_id: RunId | null }>`
      WITH placed AS (
        SELECT * FROM jsonb_to_recordset(${
      JSON.stringify(placed.map((call) => ({ id: call.attemptId, provider_call_id: call.providerCallId })))
    }::jsonb)
          AS p (id bigint, provider_call_id text)
      ),
      written AS (
        UPDATE campaign_attempts a SET provider_call_id = p.provider_call_id
        FROM placed p
        WHERE a.id = p.id AND a.provider_call_id IS NULL
      )
      SELECT a.run_id FROM campaign_attempts a JOIN placed p ON p.id = a.id
      WHERE a.provider_call_id IS NOT NULL AND a.provider_call_id <> p.provider_call_id`

  /**
   * A carrier event that is not the end: the live call's id, detection's verdict, the answer (only
   * the first one counts). One statement, attempt before run, so it is atomic without a
   * transaction of its own.
   */
  const recordProgress = (attemptId: number, providerCallId: string, progress: CallProgress, now: number) =>
    retryOnDeadlock(sql`
      WITH progressed AS (
        UPDATE campaign_attempts
        SET answered_at = ${progress.answered ? sql`COALESCE(answered_at, ${isoOf(now)})` : sql`answered_at`},
            provider_call_id = COALESCE(provider_call_id, ${providerCallId}),
            live_call_id = COALESCE(${progress.liveCallId ?? null}, live_call_id),
            answered_by = COALESCE(${progress.answeredBy ?? null}, answered_by)
        WHERE id = ${attemptId} AND ended_at IS NULL
          -- A repeated event writes nothing.
          AND ((${progress.answered} AND answered_at IS NULL) OR provider_call_id IS NULL
               OR live_call_id IS DISTINCT FROM COALESCE(${progress.liveCallId ?? null}, live_call_id)
               OR answered_by IS DISTINCT FROM COALESCE(${progress.answeredBy ?? null}, answered_by))
        RETURNING run_id, answered_at
      )
      UPDATE runs SET state = 'running', started_at = COALESCE(started_at, ${isoOf(now)}), updated_at = ${isoOf(now)}
      FROM progressed
      WHERE runs.id = progressed.run_id AND progressed.answered_at IS NOT NULL AND runs.state = 'initialized'`).pipe(
      Effect.asVoid
    )

  /**
   * Marks the number refused in its configuration, which takes it out of every pool at their next
   * claim (in any process); the campaign whose call learned it logs why. `updated_at` stays: the
   * campaign's settings did not change.
   */
  const refuseCallerId = (
    campaignId: CampaignId,
    telephonyConfigurationId: TelephonyConfigId,
    address: string,
    reason: string,
    now: number
  ) =>
    Effect.map(
      sql`
        WITH refused AS (
          UPDATE phone_numbers SET caller_id_refused_at = ${isoOf(now)}, caller_id_refused_reason = ${reason}
          WHERE telephony_configuration_id = ${telephonyConfigurationId} AND address = ${address}
            AND caller_id_refused_at IS NULL
          RETURNING id
        )
        UPDATE campaigns SET logs = logs || ${
        JSON.stringify([
          logEntry(
            isoOf(now),
            "warning",
            "caller_id_removed",
            `${address} was taken out of the caller-ID pool: ${reason}. Edit the phone number to use it again`
          )
        ])
      }::jsonb
        WHERE id = ${campaignId} AND EXISTS (SELECT 1 FROM refused)
        RETURNING id`,
      (rows) => rows.length > 0
    )

  return { loadCampaign, dialPlanDefinition, recentDispatches, recordPlaced, recordProgress, refuseCallerId }
})
