import { Context, type Effect, type Stream } from "effect"
import type { CallerIdPoolInput } from "../src/campaigns/callerIdPool.ts"
import type { CampaignProgress } from "../src/campaigns/campaignProgress.ts"
import type { Campaign, CampaignRun } from "../src/campaigns/campaignRecord.ts"
import type { CircuitBreakerPatch, RetryConfigPatch, ScheduleConfigPatch } from "../src/campaigns/campaignSettings.ts"
import type { CampaignVoicemail } from "../src/campaigns/campaignVoicemail.ts"
import type { CallingHours } from "../src/compliance/callingHours.ts"
import type { Conflict, NotFound, PayloadTooLarge, UpstreamFailed, ValidationFailed } from "../src/domain/errors.ts"
import type { CampaignId, TelephonyConfigId, WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"

/** CampaignResponse: every field of the spec, settings filled with their defaults. */
export type CampaignView = Campaign

/** An omitted setting keeps its base value; `null` asks for the setting's default. */
export interface CampaignSettingsInput {
  readonly retry_config?: RetryConfigPatch | null | undefined
  readonly max_concurrency?: number | null | undefined
  readonly rate_limit_per_second?: number | null | undefined
  readonly schedule_config?: ScheduleConfigPatch | null | undefined
  /** Replaces the campaign's own calling hours; null: the organization's apply. */
  readonly calling_hours?: CallingHours | null | undefined
  /** Replaces the campaign's caller-ID pool; null: the configuration's default caller ID. */
  readonly caller_id_pool?: CallerIdPoolInput | null | undefined
  readonly circuit_breaker?: CircuitBreakerPatch | null | undefined
  /** Replaces the campaign's own voicemail policy; null: each call follows its agent's. */
  readonly voicemail?: CampaignVoicemail | null | undefined
  readonly telephony_configuration_id?: TelephonyConfigId | null | undefined
}

export interface CreateCampaignInput extends CampaignSettingsInput {
  readonly name: string
  readonly workflow_id: WorkflowId
  readonly source_type: "csv"
  readonly source_id: string
  /** Region for numbers written without a country code (else the telephony configuration's). */
  readonly default_region?: string | null | undefined
}

export interface UpdateCampaignInput extends CampaignSettingsInput {
  readonly name?: string | undefined
}

export interface RedialInput {
  readonly name?: string | undefined
  readonly retry_on_busy?: boolean | undefined
  readonly retry_on_no_answer?: boolean | undefined
  readonly retry_on_voicemail?: boolean | undefined
  readonly retry_on_failed?: boolean | undefined
  /** Omitted or `null`: the parent campaign's. */
  readonly retry_config?: RetryConfigPatch | null | undefined
}

export interface CampaignPage {
  readonly campaigns: ReadonlyArray<CampaignView>
  readonly total_count: number
  readonly page: number
  readonly limit: number
  readonly total_pages: number
}

export type { CampaignProgress }

export type CampaignRunView = CampaignRun

export interface CampaignRunPage {
  readonly runs: ReadonlyArray<CampaignRunView>
  readonly total_count: number
  readonly page: number
  readonly limit: number
  readonly total_pages: number
}

export interface CampaignReport {
  readonly fileName: string
  /** CSV text, header first, produced as it is read (a million contacts never sit in memory). */
  readonly csv: Stream.Stream<string>
}

export interface Paging {
  readonly page: number
  readonly limit: number
}

/** Campaigns of the caller's organization: creation from an uploaded CSV, settings and lifecycle. */
export interface CampaignsShape {
  /**
   * Creates the campaign and loads its contacts: a small file before answering (422 when it is
   * unusable), a large one in the background once its header row is accepted (`import.status`
   * "loading"; problems found later fail the import and the campaign).
   */
  readonly create: (
    principal: Principal,
    input: CreateCampaignInput
  ) => Effect.Effect<CampaignView, NotFound | ValidationFailed | PayloadTooLarge | UpstreamFailed>
  readonly list: (principal: Principal, paging: Paging) => Effect.Effect<CampaignPage>
  readonly get: (principal: Principal, id: CampaignId) => Effect.Effect<CampaignView, NotFound>
  /** Settings change only while the campaign is created or paused (Conflict otherwise). */
  readonly update: (
    principal: Principal,
    id: CampaignId,
    input: UpdateCampaignInput
  ) => Effect.Effect<CampaignView, NotFound | Conflict | ValidationFailed>
  /** Conflict while the contacts are loading or after they failed to load. */
  readonly start: (
    principal: Principal,
    id: CampaignId
  ) => Effect.Effect<CampaignView, NotFound | Conflict | ValidationFailed>
  readonly pause: (principal: Principal, id: CampaignId) => Effect.Effect<CampaignView, NotFound | Conflict>
  readonly resume: (
    principal: Principal,
    id: CampaignId
  ) => Effect.Effect<CampaignView, NotFound | Conflict | ValidationFailed>
  readonly cancel: (principal: Principal, id: CampaignId) => Effect.Effect<CampaignView, NotFound | Conflict>
  /** A new campaign of the contacts whose last outcome is one of the requested reasons. */
  readonly redial: (
    principal: Principal,
    id: CampaignId,
    input: RedialInput
  ) => Effect.Effect<CampaignView, NotFound | Conflict | ValidationFailed>
  readonly progress: (principal: Principal, id: CampaignId) => Effect.Effect<CampaignProgress, NotFound>
  readonly runs: (principal: Principal, id: CampaignId, paging: Paging) => Effect.Effect<CampaignRunPage, NotFound>
  readonly report: (principal: Principal, id: CampaignId) => Effect.Effect<CampaignReport, NotFound>
}

export class Campaigns extends Context.Tag("talkgraph/Campaigns")<Campaigns, CampaignsShape>() {}
