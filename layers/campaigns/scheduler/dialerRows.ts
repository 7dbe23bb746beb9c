import { SqlClient } from "@effect/sql"
import { Data, Effect } from "effect"
import type { CircuitBreakerConfig, RetryConfig, ScheduleConfig } from "../../../src/campaign/campaignSettings.ts"
import type { CampaignState } from "../../../src/campaign/campaignState.ts"
import { channelOfMode } from "../../../src/usage/channels.ts"
import { retryOnDeadlock } from "./deadlockRetry.ts"

/** What an actor reads once when it starts: settings change only while a campaign is paused. */
export interface ActorCampaign {
  readonly id: number
  readonly organization_id: number
  readonly workflow_id: number
  readonly state: CampaignState
  readonly lease_owner: string | null
  readonly rate_limit_per_second: number
  readonly max_concurrency: number | null
  readonly retry_config: RetryConfig
  readonly schedule_config: ScheduleConfig | null
  readonly circuit_breaker: CircuitBreakerConfig
  readonly telephony_configuration_id: number | null
  readonly breaker_reset_at: Date | null
  /** Moves on every lifecycle change and settings edit: an actor that sees it move starts afresh. */
  readonly updated_at: Date
}

/** The line a campaign dials from and the workflow version its runs record. */
export interface DialPlan {
  readonly provider: string
  readonly telephonyConfigurationId: number
  readonly callerNumber: string
  readonly definitionId: number | null
  readonly versionNumber: number | null
}

export interface ClaimedAttempt {
  readonly attemptId: number
  readonly runId: number
  readonly contactId: number
  readonly attemptNumber: number
  readonly phoneNumber: string
}

export type Claim =
  | { readonly _tag: "Claimed"; readonly attempt: ClaimedAttempt }
  /** A concurrency limit is reached: `campaign` or `organization`. */
  | { readonly _tag: "Full"; readonly limit: "campaign" | "organization" }
  | { readonly _tag: "NoneDue"; readonly nextDueAt: Date | null; readonly dialing: number }
  /** The campaign is no longer running under this process's lease. */
  | { readonly _tag: "Lost" }
  /** Paused and resumed (maybe with new settings) since the actor loaded it. */
  | { readonly _tag: "Changed" }

export interface EndedAttempt {
  readonly campaignId: number
  readonly contactId: number
  readonly runId: number | null
  readonly retried: boolean
}

/** Rolls a claim back: the organization has no free call slot. */
class OrganizationFull extends Data.TaggedError("OrganizationFull") {}

/** Separates one organization's claims from another's, so its live-call count is exact. */
const ORG_CLAIM_LOCK = 7_310

const isoOf = (now: number) => new Date(now)

export const makeDialerRows = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient

  const loadCampaign = (id: number) =>
    Effect.map(
      sql<ActorCampaign>`
        SELECT id, organization_id, workflow_id, state, lease_owner, rate_limit_per_second, max_concurrency, retry_config,
               schedule_config, circuit_breaker, telephony_configuration_id, breaker_reset_at, updated_at
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

  /** Send times of the campaign's latest attempts, to rebuild the exact rate log after a (re)start. */
  const recentDispatches = (campaignId: number, count: number) =>
    Effect.map(
      sql<{ created_at: Date }>`
        SELECT created_at FROM campaign_attempts WHERE campaign_id = ${campaignId} ORDER BY created_at DESC LIMIT ${count}`,
      (rows) => rows.map((row) => row.created_at.getTime())
    )

  /**
   * Claims the next due contact and records its attempt and run in one transaction, BEFORE the
   * carrier is called: a crash after this point leaves an attempt to reconcile, never a contact
   * to dial twice. Live calls are counted under a per-organization lock, so two actors (in any
   * process) cannot both take the last slot.
   */
  const claimNext = (input: {
    readonly campaign: ActorCampaign
    readonly owner: string
    readonly now: number
    readonly deadlineAt: number
    readonly orgLimit: number
    readonly plan: DialPlan
  }) =>
    retryOnDeadlock(sql.withTransaction(Effect.gen(function* () {
      const { campaign, now, plan } = input
      const [current] = yield* sql<{ state: string; lease_owner: string | null; leased: boolean; updated_at: Date }>`
        SELECT state, lease_owner, lease_expires_at > now() AS leased, updated_at FROM campaigns WHERE id = ${campaign.id}`
      if (!current || current.state !== "running" || current.lease_owner !== input.owner || !current.leased) {
        return { _tag: "Lost" } as Claim
      }
      if (current.updated_at.getTime() !== campaign.updated_at.getTime()) return { _tag: "Changed" } as Claim
      // Only this actor adds attempts to this campaign, so its own count needs no lock.
      if (campaign.max_concurrency !== null) {
        const [live] = yield* sql<{ live: number }>`
          SELECT count(*)::int AS live FROM campaign_attempts WHERE campaign_id = ${campaign.id} AND ended_at IS NULL`
        if (live!.live >= campaign.max_concurrency) return { _tag: "Full", limit: "campaign" } as Claim
      }
      const [contact] = yield* sql<{
        id: number
        row_number: number
        phone_number: string
        context: Record<string, unknown>
        greeting_override: unknown
        attempt_count: number
      }>`
        SELECT id, row_number, phone_number, context, greeting_override, attempt_count
        FROM campaign_contacts
        WHERE campaign_id = ${campaign.id} AND state = 'pending' AND next_attempt_at <= ${isoOf(now)}
        ORDER BY next_attempt_at, id
        LIMIT 1
        FOR UPDATE SKIP LOCKED`
      if (!contact) {
        const [rest] = yield* sql<{ next_due: Date | null; dialing: number }>`
          SELECT min(next_attempt_at) FILTER (WHERE state = 'pending') AS next_due,
                 count(*) FILTER (WHERE state = 'dialing')::int AS dialing
          FROM campaign_contacts WHERE campaign_id = ${campaign.id} AND state IN ('pending', 'dialing')`
        return { _tag: "NoneDue", nextDueAt: rest?.next_due ?? null, dialing: rest?.dialing ?? 0 } as Claim
      }
      const attemptNumber = contact.attempt_count + 1
      const initialContext = {
        ...contact.context,
        phone_number: contact.phone_number,
        ...(contact.greeting_override ? { greeting_override: contact.greeting_override } : {}),
        caller_number: plan.callerNumber,
        called_number: contact.phone_number,
        campaign_id: campaign.id,
        attempt_number: attemptNumber
      }
      const [run] = yield* sql<{ id: number }>`
        INSERT INTO runs (organization_id, workflow_id, definition_id, version_number, name, channel, mode, direction,
                          caller_number, called_number, campaign_id, contact_id, initial_context, created_at, updated_at)
        VALUES (${campaign.organization_id}, ${campaign.workflow_id}, ${plan.definitionId}, ${plan.versionNumber},
                ${`campaign-${campaign.id}-row-${contact.row_number}-attempt-${attemptNumber}`},
                ${channelOfMode(plan.provider)}, ${plan.provider}, 'outbound', ${plan.callerNumber}, ${contact.phone_number},
                ${campaign.id}, ${contact.id}, ${JSON.stringify(initialContext)}::jsonb, ${isoOf(now)}, ${isoOf(now)})
        RETURNING id`
      const [attempt] = yield* sql<{ id: number }>`
        INSERT INTO campaign_attempts (organization_id, campaign_id, contact_id, attempt_number, run_id, created_at,
                                       deadline_at, telephony_configuration_id, provider, caller_number)
        VALUES (${campaign.organization_id}, ${campaign.id}, ${contact.id}, ${attemptNumber}, ${run!.id}, ${isoOf(now)},
                ${isoOf(input.deadlineAt)}, ${plan.telephonyConfigurationId}, ${plan.provider}, ${plan.callerNumber})
        RETURNING id`
      yield* sql`
        UPDATE campaign_contacts
        SET state = 'dialing', attempt_count = ${attemptNumber}, last_attempt_at = ${isoOf(now)}, last_run_id = ${run!.id},
            updated_at = ${isoOf(now)}
        WHERE id = ${contact.id}`
      yield* sql`UPDATE campaigns SET executed_count = executed_count + 1 WHERE id = ${campaign.id}`
      // The organization's limit is shared by actors in every process: counted under a lock taken
      // last, so claims of one organization queue only for this count and the commit. Over the
      // limit, the whole claim is rolled back.
      yield* sql`SELECT pg_advisory_xact_lock(${ORG_CLAIM_LOCK}, ${campaign.organization_id}::int)`
      const [organization] = yield* sql<{ live: number }>`
        SELECT count(*)::int AS live FROM campaign_attempts WHERE organization_id = ${campaign.organization_id} AND ended_at IS NULL`
      if (organization!.live > input.orgLimit) return yield* new OrganizationFull()
      return {
        _tag: "Claimed",
        attempt: { attemptId: attempt!.id, runId: run!.id, contactId: contact.id, attemptNumber, phoneNumber: contact.phone_number }
      } as Claim
    }))).pipe(Effect.catchTag("OrganizationFull", () => Effect.succeed({ _tag: "Full", limit: "organization" } as Claim)))

  const recordPlaced = (attemptId: number, providerCallId: string) =>
    sql`
      UPDATE campaign_attempts SET provider_call_id = ${providerCallId}
      WHERE id = ${attemptId} AND provider_call_id IS NULL`.pipe(Effect.asVoid)

  /** A carrier event that is not the end: the call was answered (only the first one counts). */
  const recordAnswered = (attemptId: number, providerCallId: string, now: number) =>
    retryOnDeadlock(sql.withTransaction(Effect.gen(function* () {
      const rows = yield* sql<{ run_id: number | null }>`
        UPDATE campaign_attempts
        SET answered_at = COALESCE(answered_at, ${isoOf(now)}), provider_call_id = COALESCE(provider_call_id, ${providerCallId})
        WHERE id = ${attemptId} AND ended_at IS NULL
        RETURNING run_id`
      const runId = rows[0]?.run_id
      if (runId) {
        yield* sql`
          UPDATE runs SET state = 'running', started_at = COALESCE(started_at, ${isoOf(now)}), updated_at = ${isoOf(now)}
          WHERE id = ${runId} AND state = 'initialized'`
      }
    })))

  return { loadCampaign, dialPlanDefinition, recentDispatches, claimNext, recordPlaced, recordAnswered, sql }
})

export type DialerRows = Effect.Effect.Success<typeof makeDialerRows>

