import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { logEntry } from "../../../src/campaign/campaignLog.ts"
import type { RetryConfig } from "../../../src/campaign/campaignSettings.ts"
import { afterOutcome, type CallOutcome } from "../../../src/campaign/retryPolicy.ts"
import { retryOnDeadlock } from "./deadlockRetry.ts"

export interface OutcomeInput {
  readonly attemptId: number
  readonly outcome: CallOutcome
  /** Why the attempt ended, for reports: `telephony_busy`, `not_placed`, `deadline_exceeded`, … */
  readonly endReason: string
  readonly durationSeconds: number | null
  readonly providerCallId: string | null
  readonly now: number
}

export interface AppliedOutcome {
  readonly campaignId: number
  readonly contactId: number
  readonly retried: boolean
}

export interface OverdueAttempt {
  readonly id: number
  readonly organization_id: number
  readonly campaign_id: number
  readonly provider: string | null
  readonly provider_call_id: string | null
  readonly telephony_configuration_id: number | null
}

const at = (now: number) => new Date(now)

/** While a sweeper reconciles an overdue call, others leave it alone this long. */
const RECONCILE_HOLD_MS = 30_000

export const makeOutcomeRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  /**
   * Ends an attempt and moves everything that depends on it in one transaction: the contact
   * (retry or done), the campaign's counters, the run. Only the first final event of an attempt
   * matches `ended_at IS NULL`, so a repeated or late callback changes nothing.
   */
  const applyOutcome = (input: OutcomeInput) =>
    retryOnDeadlock(sql.withTransaction(Effect.gen(function* () {
      const [ended] = yield* sql<{ campaign_id: number; contact_id: number; attempt_number: number; run_id: number | null }>`
        UPDATE campaign_attempts
        SET outcome = ${input.outcome}, ended_at = ${at(input.now)}, end_reason = ${input.endReason},
            provider_call_id = COALESCE(provider_call_id, ${input.providerCallId})
        WHERE id = ${input.attemptId} AND ended_at IS NULL
        RETURNING campaign_id, contact_id, attempt_number, run_id`
      if (!ended) return undefined
      // Runs before campaigns: the same lock order as a claim (a runs trigger keeps usage rollups).
      if (ended.run_id !== null) {
        const failed = input.outcome !== "completed" && input.outcome !== "voicemail"
        yield* sql`
          UPDATE runs
          SET state = CASE WHEN ended_at IS NULL THEN ${failed ? "failed" : "completed"} ELSE state END,
              end_reason = COALESCE(end_reason, ${input.endReason}),
              duration_seconds = CASE WHEN duration_seconds = 0 THEN ${input.durationSeconds ?? 0} ELSE duration_seconds END,
              ended_at = COALESCE(ended_at, ${at(input.now)}), updated_at = ${at(input.now)}
          WHERE id = ${ended.run_id}`
      }
      const [campaign] = yield* sql<{ state: string; retry_config: RetryConfig }>`
        SELECT state, retry_config FROM campaigns WHERE id = ${ended.campaign_id}`
      const decision = afterOutcome(campaign!.retry_config, input.outcome, ended.attempt_number, input.now)
      // A stopped campaign places no more calls, so its last attempt decides the contact.
      const retry = decision.kind === "retry" && (campaign!.state === "running" || campaign!.state === "paused")
      if (retry) {
        yield* sql`
          UPDATE campaign_contacts
          SET state = 'pending', next_attempt_at = ${at(decision.at)}, last_outcome = ${input.outcome}, updated_at = ${at(input.now)}
          WHERE id = ${ended.contact_id}`
        yield* sql`UPDATE campaigns SET total_queued_count = total_queued_count + 1 WHERE id = ${ended.campaign_id}`
      } else {
        const succeeded = input.outcome === "completed"
        yield* sql`
          UPDATE campaign_contacts
          SET state = ${succeeded ? "completed" : "failed"}, last_outcome = ${input.outcome}, updated_at = ${at(input.now)}
          WHERE id = ${ended.contact_id}`
        yield* sql`
          UPDATE campaigns
          SET processed_rows = processed_rows + 1, failed_rows = failed_rows + ${succeeded ? 0 : 1}
          WHERE id = ${ended.campaign_id}`
      }
      // A freed slot may let this campaign (or another of the organization, in any process) dial again.
      yield* sql`SELECT pg_notify('talkgraph_campaigns', ${`slot:${ended.campaign_id}`})`
      return { campaignId: ended.campaign_id, contactId: ended.contact_id, retried: retry } satisfies AppliedOutcome
    })))

  /** Overdue live attempts, held for this sweeper for a while so another process skips them. */
  const claimOverdue = (now: number, limit: number) =>
    sql<OverdueAttempt>`
      UPDATE campaign_attempts SET deadline_at = ${at(now + RECONCILE_HOLD_MS)}
      WHERE id IN (
        SELECT id FROM campaign_attempts
        WHERE ended_at IS NULL AND deadline_at < ${at(now)}
        ORDER BY deadline_at LIMIT ${limit}
        FOR UPDATE SKIP LOCKED
      )
      RETURNING id, organization_id, campaign_id, provider, provider_call_id, telephony_configuration_id`

  /** Outcomes the breaker sees: attempts made since its last trip that ended inside the window. */
  const breakerOutcomes = (campaignId: number, since: number, resetAt: Date | null) =>
    sql<{ ended_at: Date; outcome: string; end_reason: string | null; run_id: number | null }>`
      SELECT ended_at, outcome, end_reason, run_id FROM campaign_attempts
      WHERE campaign_id = ${campaignId} AND ended_at > ${at(since)}
        AND created_at > ${resetAt ?? new Date(0)}
      ORDER BY ended_at`

  /** Pauses the campaign for its failing carrier path; resuming starts a fresh window. */
  const tripBreaker = (campaignId: number, now: number, message: string, details: unknown) =>
    sql`
      UPDATE campaigns
      SET state = 'paused', breaker_reset_at = ${at(now)}, updated_at = ${at(now)},
          logs = logs || ${JSON.stringify([logEntry(at(now), "error", "circuit_breaker_tripped", message, details)])}::jsonb
      WHERE id = ${campaignId} AND state = 'running'
      RETURNING id`

  /** Completes the campaign only when no contact is pending (due or scheduled) or live. */
  const complete = (campaignId: number, now: number) =>
    sql`
      UPDATE campaigns
      SET state = 'completed', completed_at = ${at(now)}, updated_at = ${at(now)}, lease_owner = NULL, lease_expires_at = NULL,
          logs = logs || ${
      JSON.stringify([logEntry(at(now), "info", "campaign_completed", "Every contact has been called; nothing is pending, scheduled or live")])
    }::jsonb
      WHERE id = ${campaignId} AND state = 'running'
        AND NOT EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = ${campaignId} AND state IN ('pending', 'dialing'))
        AND NOT EXISTS (SELECT 1 FROM campaign_attempts WHERE campaign_id = ${campaignId} AND ended_at IS NULL)
      RETURNING id`

  /** Pauses a campaign the dialer cannot serve (no usable telephony), saying why. */
  const pauseWithReason = (campaignId: number, now: number, event: string, message: string) =>
    sql`
      UPDATE campaigns
      SET state = 'paused', updated_at = ${at(now)},
          logs = logs || ${JSON.stringify([logEntry(at(now), "error", event, message)])}::jsonb
      WHERE id = ${campaignId} AND state = 'running'`

  return { applyOutcome, claimOverdue, breakerOutcomes, tripBreaker, complete, pauseWithReason }
})

export type OutcomeRows = Effect.Effect.Success<typeof makeOutcomeRows>
