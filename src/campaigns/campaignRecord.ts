import { Schema } from "effect"
import { CallingHours } from "../compliance/callingHours.ts"
import { CampaignId, RunId, TelephonyConfigId, WorkflowId } from "../domain/ids.ts"
import { Timestamp } from "../domain/wireTypes.ts"
import { CallerIdPool } from "./callerIdPool.ts"
import { CampaignLogEntry } from "./campaignLog.ts"
import { CircuitBreakerConfig, RetryConfig, ScheduleConfig } from "./campaignSettings.ts"
import { CampaignState } from "./campaignState.ts"
import { CampaignVoicemail } from "./campaignVoicemail.ts"
import { CampaignImport } from "./contactImport.ts"

/**
 * A campaign as the API answers it (CampaignResponse: every field of the spec, settings filled
 * with their defaults). The one definition: the service's view is its type, the HTTP response its
 * encoding, and the row type adds the columns the API does not show.
 */
export const Campaign = Schema.Struct({
  id: CampaignId,
  name: Schema.String,
  workflow_id: WorkflowId,
  workflow_name: Schema.String,
  state: CampaignState,
  source_type: Schema.Literal("csv"),
  source_id: Schema.String,
  default_region: Schema.NullOr(Schema.String),
  total_rows: Schema.NullOr(Schema.Int),
  processed_rows: Schema.Int,
  failed_rows: Schema.Int,
  created_at: Timestamp,
  updated_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  completed_at: Schema.NullOr(Timestamp),
  retry_config: RetryConfig,
  max_concurrency: Schema.NullOr(Schema.Int),
  rate_limit_per_second: Schema.Int,
  schedule_config: Schema.NullOr(ScheduleConfig),
  calling_hours: Schema.NullOr(CallingHours).annotations({
    description: "The campaign's own calling hours in each recipient's local time; null: the organization's"
  }),
  caller_id_pool: Schema.NullOr(CallerIdPool).annotations({
    description: "The numbers calls are placed from and how each is picked; null: the configuration's default caller ID"
  }),
  circuit_breaker: CircuitBreakerConfig,
  voicemail: Schema.NullOr(CampaignVoicemail).annotations({
    description: "The campaign's own voicemail policy; null: each call follows its agent's"
  }),
  executed_count: Schema.Int,
  total_queued_count: Schema.Int,
  parent_campaign_id: Schema.NullOr(CampaignId),
  redialed_campaign_id: Schema.NullOr(CampaignId),
  telephony_configuration_id: Schema.NullOr(TelephonyConfigId),
  telephony_configuration_name: Schema.NullOr(Schema.String),
  logs: Schema.Array(CampaignLogEntry),
  warnings: Schema.Array(Schema.String),
  /** Loading the contacts: `ready` once they are all stored (`total_rows` is null until then). */
  import: CampaignImport
}).annotations({ identifier: "CampaignResponse" })
export type Campaign = typeof Campaign.Type

/** One call of a campaign (CampaignRunResponse). */
export const CampaignRun = Schema.Struct({
  id: RunId,
  name: Schema.String,
  state: Schema.String,
  mode: Schema.String,
  direction: Schema.String,
  caller_number: Schema.NullOr(Schema.String),
  called_number: Schema.NullOr(Schema.String),
  contact_id: Schema.NullOr(Schema.Int),
  disposition: Schema.NullOr(Schema.String),
  end_reason: Schema.NullOr(Schema.String),
  duration_seconds: Schema.Int,
  created_at: Timestamp,
  started_at: Schema.NullOr(Timestamp),
  ended_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "CampaignRunResponse" })
export type CampaignRun = typeof CampaignRun.Type
