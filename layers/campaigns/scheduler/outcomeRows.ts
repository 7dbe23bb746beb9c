import { SqlClient, type Statement } from "@effect/sql"
import type { SqlError } from "@effect/sql/SqlError"
import { Effect } from "effect"
import type { AppliedOutcome, EndedAttempt, OutcomeInput, OverdueAttempt } from "../../../services/DialerRepo.ts"
import { logEntry } from "../../../src/campaigns/campaignLog.ts"
import type { RetryConfig } from "../../../src/campaigns/campaignSettings.ts"
import { type AnsweredBy, outcomeWithVerdict } from "../../../src/campaigns/machineVerdict.ts"
import { afterOutcome } from "../../../src/campaigns/retryPolicy.ts"
import type { CampaignId } from "../../../src/domain/ids.ts"
import { retryOnDeadlock } from "./deadlockRetry.ts"

/** What deciding an attempt's outcome needs to know about it and its campaign. */
interface EndingAttempt {
  /** Null for a single call (`calls`): it has no contact, counters or retries. */
  readonly campaign_id: CampaignId | null
  readonly contact_id: number | null
  readonly attempt_number: number
  readonly ended: boolean
  readonly state: string
  readonly retry_config: RetryConfig
  readonly answered_by: AnsweredBy | null
}

const at = (now: number) => new Date(now)

/** While a sweeper reconciles an overdue call, others leave it alone this long. */
const RECONCILE_HOLD_MS = 30_000

export const makeOutcomeRows = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  /**
   * Ends an attempt and moves everything that depends on it at once: the run, the contact (retry
   * or done), the campaign's counters. One statement, so it commits without a round trip to the
   * client in between: the usage rollup rows a run's trigger updates are shared by every call of
   * the organization, and are held only while the database itself works. The rows are locked in
   * the order every dialer write uses: attempt, run, contact, campaign, and the rollup (the
   * trigger fires at the end of the statement). Only the first final event of an attempt matches
   * `ended_at IS NULL`, so a repeated or late callback changes nothing.
   *
   * A completed campaign call (most of them) ends its contact as done whatever its campaign's retry
   * settings, state or attempt number say, unless a machine answered it: that is checked in the
   * statement itself, and the attempt is read first only when it is not such a call, or when the
   * statement found nothing to end (a machine's answer, a single call, a repeated event).
   */
  const applyOutcome = (input: OutcomeInput): Effect.Effect<AppliedOutcome | undefined, SqlError> =>
    input.outcome === "completed" && input.redialAt === undefined && input.answeredBy !== "machine"
      ? Effect.flatMap(
        endCampaignAttempt(input, null, input.answeredBy ? sql`` : sql`AND answered_by IS DISTINCT FROM 'machine'`),
        (applied) => applied === undefined ? readThenApply(input) : Effect.succeed(applied)
      )
      : readThenApply(input)

  const readThenApply = (input: OutcomeInput) =>
    Effect.flatMap(
      sql<EndingAttempt>`
        SELECT a.campaign_id, a.contact_id, a.attempt_number, a.ended_at IS NOT NULL AS ended, c.state, c.retry_config, a.answered_by
        FROM campaign_attempts a LEFT JOIN campaigns c ON c.id = a.campaign_id
        WHERE a.id = ${input.attemptId}`,
      ([attempt]) =>
        attempt?.campaign_id === null
          ? endSingleCall({
            ...input,
            outcome: outcomeWithVerdict(input.outcome, input.answeredBy ?? attempt.answered_by)
          })
          : attempt
          ? endAttempt(attempt, {
            ...input,
            outcome: outcomeWithVerdict(input.outcome, input.answeredBy ?? attempt.answered_by)
          })
          : Effect.succeed(undefined)
    )

  /**
   * A single call's attempt (no campaign): the attempt and its run end as a campaign's do, in one
   * statement, and only the first final event counts; there is no contact to retry.
   */
  const endSingleCall = (input: OutcomeInput) =>
    Effect.map(
      retryOnDeadlock(sql`
        WITH ended AS (
          UPDATE campaign_attempts
          SET outcome = ${input.outcome}, ended_at = ${at(input.now)}, end_reason = ${input.endReason},
              provider_call_id = COALESCE(provider_call_id, ${input.providerCallId})
          WHERE id = ${input.attemptId} AND ended_at IS NULL
          RETURNING run_id
        )
        UPDATE runs
        SET state = CASE WHEN runs.ended_at IS NULL THEN ${
        input.outcome === "completed" || input.outcome === "voicemail" ? "completed" : "failed"
      } ELSE runs.state END,
            end_reason = COALESCE(runs.end_reason, ${input.endReason}),
            error = COALESCE(runs.error, ${input.error ?? null}),
            duration_seconds = CASE WHEN runs.duration_seconds = 0 THEN ${
        input.durationSeconds ?? 0
      } ELSE runs.duration_seconds END,
            ended_at = COALESCE(runs.ended_at, ${at(input.now)}), updated_at = ${at(input.now)}
        FROM ended
        WHERE runs.id = ended.run_id
        RETURNING runs.id`),
      (rows): AppliedOutcome | undefined =>
        rows.length === 0 ? undefined : { campaignId: null, contactId: null, retried: false }
    )

  const endAttempt = (attempt: EndingAttempt, input: OutcomeInput) => {
    if (attempt.ended) return Effect.succeed(undefined)
    const decision = input.redialAt === undefined
      ? afterOutcome(attempt.retry_config, input.outcome, attempt.attempt_number, input.now)
      : { kind: "retry" as const, at: input.redialAt }
    // A stopped campaign places no more calls, so its last attempt decides the contact.
    const retryAt = decision.kind === "retry" && (attempt.state === "running" || attempt.state === "paused")
      ? decision.at
      : null
    return endCampaignAttempt(input, retryAt, sql``)
  }

  /**
   * The statement that ends a campaign's attempt: the contact redialled at `retryAt`, or done.
   * `guard` narrows the attempts it ends; nothing ended (another final event got there first, or
   * the guard refused it) answers undefined.
   */
  const endCampaignAttempt = (input: OutcomeInput, retryAt: number | null, guard: Statement.Fragment) => {
    const succeeded = input.outcome === "completed"
    const failedRun = input.outcome !== "completed" && input.outcome !== "voicemail"
    const contact = retryAt !== null
      ? sql`state = 'pending', next_attempt_at = ${at(retryAt)}`
      : sql`state = ${succeeded ? "completed" : "failed"}`
    const counters = retryAt !== null
      ? sql`total_queued_count = total_queued_count + 1`
      : sql`processed_rows = processed_rows + 1, failed_rows = failed_rows + ${succeeded ? 0 : 1}`
    return Effect.map(
      retryOnDeadlock(sql<{ readonly campaign_id: CampaignId; readonly contact_id: number }>`
        WITH ended AS (
          UPDATE campaign_attempts
          SET outcome = ${input.outcome}, ended_at = ${at(input.now)}, end_reason = ${input.endReason},
              provider_call_id = COALESCE(provider_call_id, ${input.providerCallId})
          WHERE id = ${input.attemptId} AND ended_at IS NULL AND campaign_id IS NOT NULL ${guard}
          RETURNING campaign_id, contact_id, run_id
        ),
        run AS (
          UPDATE runs
          SET state = CASE WHEN runs.ended_at IS NULL THEN ${failedRun ? "failed" : "completed"} ELSE runs.state END,
              end_reason = COALESCE(runs.end_reason, ${input.endReason}),
              error = COALESCE(runs.error, ${input.error ?? null}),
              duration_seconds = CASE WHEN runs.duration_seconds = 0 THEN ${
        input.durationSeconds ?? 0
      } ELSE runs.duration_seconds END,
              ended_at = COALESCE(runs.ended_at, ${at(input.now)}), updated_at = ${at(input.now)}
          FROM ended
          WHERE runs.id = ended.run_id
          RETURNING runs.id
        ),
        contact AS (
          UPDATE campaign_contacts
          SET ${contact}, last_outcome = ${input.outcome}, updated_at = ${at(input.now)}
          FROM ended
          WHERE campaign_contacts.id = ended.contact_id
          RETURNING campaign_contacts.campaign_id, campaign_contacts.id AS contact_id
        )
        -- Joining the run makes it end before the campaign row is locked.
        UPDATE campaigns SET ${counters}
        FROM contact LEFT JOIN run ON true
        WHERE campaigns.id = contact.campaign_id
        RETURNING campaigns.id AS campaign_id, contact.contact_id,
          pg_notify('talkgraph_campaigns', 'slot:' || campaigns.id)`),
      ([applied]): AppliedOutcome | undefined =>
        applied === undefined
          ? undefined
          : { campaignId: applied.campaign_id, contactId: applied.contact_id, retried: retryAt !== null }
    )
  }

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
      RETURNING id, organization_id, campaign_id, provider, provider_call_id, live_call_id, telephony_configuration_id`

  /** Outcomes the breaker sees: attempts made since its last trip that ended inside the window. */
  const breakerOutcomes = (campaignId: CampaignId, since: number, resetAt: Date | null) =>
    sql<EndedAttempt>`
      SELECT ended_at, outcome, end_reason, run_id FROM campaign_attempts
      WHERE campaign_id = ${campaignId} AND ended_at > ${at(since)}
        AND created_at > ${resetAt ?? new Date(0)}
      ORDER BY ended_at`

  /** Pauses the campaign for its failing carrier path; resuming starts a fresh window. */
  const tripBreaker = (campaignId: CampaignId, now: number, message: string, details: unknown) =>
    sql`
      UPDATE campaigns
      SET state = 'paused', breaker_reset_at = ${at(now)}, updated_at = ${at(now)},
          logs = logs || ${
      JSON.stringify([logEntry(at(now), "error", "circuit_breaker_tripped", message, details)])
    }::jsonb
      WHERE id = ${campaignId} AND state = 'running'`.pipe(Effect.asVoid)

  /** Completes the campaign only when no contact is pending (due or scheduled) or live. */
  const complete = (campaignId: CampaignId, now: number) =>
    sql`
      UPDATE campaigns
      SET state = 'completed', completed_at = ${at(now)}, updated_at = ${
      at(now)
    }, lease_owner = NULL, lease_expires_at = NULL,
          logs = logs || ${
      JSON.stringify([
        logEntry(
          at(now),
          "info",
          "campaign_completed",
          "Every contact has been called; nothing is pending, scheduled or live"
        )
      ])
    }::jsonb
      WHERE id = ${campaignId} AND state = 'running'
        AND NOT EXISTS (SELECT 1 FROM campaign_contacts WHERE campaign_id = ${campaignId} AND state IN ('pending', 'dialing'))
        AND NOT EXISTS (SELECT 1 FROM campaign_attempts WHERE campaign_id = ${campaignId} AND ended_at IS NULL)
      RETURNING id`.pipe(Effect.map((completed) => completed.length > 0))

  /** Pauses a campaign the dialer cannot serve (no usable telephony), saying why. */
  const pauseWithReason = (campaignId: CampaignId, now: number, event: string, message: string) =>
    sql`
      UPDATE campaigns
      SET state = 'paused', updated_at = ${at(now)},
          logs = logs || ${JSON.stringify([logEntry(at(now), "error", event, message)])}::jsonb
      WHERE id = ${campaignId} AND state = 'running'`.pipe(Effect.asVoid)

  return { applyOutcome, claimOverdue, breakerOutcomes, tripBreaker, complete, pauseWithReason }
})
