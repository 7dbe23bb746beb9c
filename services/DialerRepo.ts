import { Context, type Effect } from "effect"
import type { CallerIdPool } from "../src/campaigns/callerIdPool.ts"
import type { CircuitBreakerConfig, RetryConfig, ScheduleConfig } from "../src/campaigns/campaignSettings.ts"
import type { CampaignState } from "../src/campaigns/campaignState.ts"
import type { BreakerVerdict } from "../src/campaigns/circuitBreaker.ts"
import type { AnsweredBy } from "../src/campaigns/machineVerdict.ts"
import type { CallOutcome } from "../src/campaigns/retryPolicy.ts"
import type { CampaignId, OrganizationId, RunId, TelephonyConfigId, WorkflowId } from "../src/domain/ids.ts"

/** What an actor reads once when it starts: settings change only while a campaign is paused. */
export interface ActorCampaign {
  readonly id: CampaignId
  readonly organization_id: OrganizationId
  readonly workflow_id: WorkflowId
  readonly state: CampaignState
  readonly lease_owner: string | null
  readonly rate_limit_per_second: number
  readonly max_concurrency: number | null
  readonly retry_config: RetryConfig
  readonly schedule_config: ScheduleConfig | null
  readonly circuit_breaker: CircuitBreakerConfig
  readonly telephony_configuration_id: TelephonyConfigId | null
  readonly caller_id_pool: CallerIdPool | null
  readonly breaker_reset_at: Date | null
  /** Moves on every lifecycle change and settings edit: an actor that sees it move starts afresh. */
  readonly updated_at: Date
}

/** What a carrier's event said about a call that goes on. */
export interface CallProgress {
  readonly answered: boolean
  readonly liveCallId?: string | undefined
  readonly answeredBy?: AnsweredBy | undefined
}

/** The line a campaign dials from and the workflow version its runs record. */
export interface DialPlan {
  readonly provider: string
  readonly telephonyConfigurationId: TelephonyConfigId
  /** The configuration's default caller ID: what every call is placed from without a pool. */
  readonly callerNumber: string
  readonly callerIdPool: CallerIdPool | null
  readonly definitionId: number | null
  readonly versionNumber: number | null
}

export interface ClaimedAttempt {
  readonly attemptId: number
  readonly runId: RunId
  readonly contactId: number
  readonly attemptNumber: number
  readonly phoneNumber: string
  /** What the call is placed from: the plan's caller ID, or the pool number the claim picked. */
  readonly callerNumber: string
}

export type Claim =
  /** In dialling order; never more than asked for or than the free call slots. */
  | { readonly _tag: "Claimed"; readonly attempts: ReadonlyArray<ClaimedAttempt> }
  /** A concurrency limit is reached: `campaign` or `organization`. */
  | { readonly _tag: "Full"; readonly limit: "campaign" | "organization" }
  /** Every pool number is at its per-second or per-day cap until `until`. */
  | { readonly _tag: "CallerIdsBusy"; readonly until: number }
  /** The pool has no number left to dial from (none listed is active, or the carrier refused each). */
  | { readonly _tag: "NoCallerIds" }
  | { readonly _tag: "NoneDue"; readonly nextDueAt: Date | null; readonly dialing: number }
  /** The breaker's window holds enough failures: nothing was claimed, the campaign must pause. */
  | { readonly _tag: "Tripped"; readonly verdict: BreakerVerdict }
  /** The campaign is no longer running under this process's lease. */
  | { readonly _tag: "Lost" }
  /** Paused and resumed (maybe with new settings) since the actor loaded it. */
  | { readonly _tag: "Changed" }

export interface ClaimInput {
  readonly campaign: ActorCampaign
  readonly owner: string
  /** At most this many contacts: what the rate allows now. */
  readonly wanted: number
  readonly now: number
  readonly deadlineAt: number
  readonly orgLimit: number
  readonly plan: DialPlan
}

export interface OutcomeInput {
  readonly attemptId: number
  /** As the final event reported it; a completed call a machine answered becomes voicemail here. */
  readonly outcome: CallOutcome
  /** Detection's verdict when the final event carries it (Twilio); otherwise the one recorded mid-call counts. */
  readonly answeredBy?: AnsweredBy | null
  /** Why the attempt ended, for reports: `telephony_busy`, `not_placed`, `deadline_exceeded`, … */
  readonly endReason: string
  readonly durationSeconds: number | null
  readonly providerCallId: string | null
  readonly now: number
  /** What went wrong, in our words, recorded on the run when it has none yet. */
  readonly error?: string | undefined
  /** The contact is due again at this time whatever the retry policy says: the call never left (its caller ID was refused). */
  readonly redialAt?: number | undefined
}

export interface AppliedOutcome {
  /** Null for a single call's attempt (`POST /api/v2/calls`): no campaign, no contact. */
  readonly campaignId: CampaignId | null
  readonly contactId: number | null
  readonly retried: boolean
}

export interface OverdueAttempt {
  readonly id: number
  readonly organization_id: OrganizationId
  /** Null for a single call's attempt. */
  readonly campaign_id: CampaignId | null
  readonly provider: string | null
  readonly provider_call_id: string | null
  readonly live_call_id: string | null
  readonly telephony_configuration_id: TelephonyConfigId | null
}

/** An attempt's end as the breaker sees it. */
export interface EndedAttempt {
  readonly ended_at: Date
  readonly outcome: string
  readonly end_reason: string | null
  readonly run_id: RunId | null
}

/**
 * The dialer's rows: campaigns as an actor reads them, contact claims, attempts as the carrier
 * reports on them, and the outcomes that move contacts, counters and the campaign's state. Each
 * write is one statement or one short transaction, so no lock is held across a carrier request.
 * A failing statement is a defect (the actor restarts from the database).
 */
export interface DialerRepoShape {
  readonly loadCampaign: (id: CampaignId) => Effect.Effect<ActorCampaign | undefined>
  /** The workflow version a campaign's runs record: the published one, else the latest draft. */
  readonly dialPlanDefinition: (
    workflowId: WorkflowId
  ) => Effect.Effect<{ readonly id: number; readonly version_number: number } | undefined>
  /** Claim times of the campaign's latest attempts, to rebuild the rate log after a (re)start or takeover. */
  readonly recentDispatches: (campaignId: CampaignId, count: number) => Effect.Effect<ReadonlyArray<number>>
  /**
   * The carrier's call ids of attempts it accepted, in one statement however many there are.
   * Returns the runs whose attempt a signed callback already tied to another call.
   */
  readonly recordPlaced: (
    placed: ReadonlyArray<{ readonly attemptId: number; readonly providerCallId: string }>
  ) => Effect.Effect<ReadonlyArray<{ readonly run_id: RunId | null }>>
  /** A carrier event that is not the end: the live call's id, detection's verdict, the answer. */
  readonly recordProgress: (
    attemptId: number,
    providerCallId: string,
    progress: CallProgress,
    now: number
  ) => Effect.Effect<void>
  /** Claims due contacts and records their attempts and runs, before the carrier is called. */
  readonly claim: (input: ClaimInput) => Effect.Effect<Claim>
  /** Ends an attempt and moves its run, contact and campaign counters; undefined when another event ended it first. */
  readonly applyOutcome: (input: OutcomeInput) => Effect.Effect<AppliedOutcome | undefined>
  /** Overdue live attempts, held for this sweeper for a while so another process skips them. */
  readonly claimOverdue: (now: number, limit: number) => Effect.Effect<ReadonlyArray<OverdueAttempt>>
  /** Outcomes the breaker sees: attempts made since its last trip that ended inside the window. */
  readonly breakerOutcomes: (
    campaignId: CampaignId,
    since: number,
    resetAt: Date | null
  ) => Effect.Effect<ReadonlyArray<EndedAttempt>>
  /** Pauses the campaign for its failing carrier path; resuming starts a fresh window. */
  readonly tripBreaker: (campaignId: CampaignId, now: number, message: string, details: unknown) => Effect.Effect<void>
  /** Completes the campaign only when no contact is pending or live; whether it did. */
  readonly complete: (campaignId: CampaignId, now: number) => Effect.Effect<boolean>
  /**
   * Takes a number the carrier refused as a caller ID out of every pool of its configuration (one
   * process records it, with the carrier's reason, in the campaign's log); whether this call did.
   */
  readonly refuseCallerId: (
    campaignId: CampaignId,
    telephonyConfigurationId: TelephonyConfigId,
    address: string,
    reason: string,
    now: number
  ) => Effect.Effect<boolean>
  /** Pauses a campaign the dialer cannot serve (no usable telephony), saying why. */
  readonly pauseWithReason: (campaignId: CampaignId, now: number, event: string, message: string) => Effect.Effect<void>
}

export class DialerRepo extends Context.Tag("talkgraph/DialerRepo")<DialerRepo, DialerRepoShape>() {}
