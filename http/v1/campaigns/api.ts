import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "@effect/platform"
import { Schema } from "effect"
import { CampaignLogEntry } from "../../../src/campaign/campaignLog.ts"
import {
  CircuitBreakerConfig,
  CircuitBreakerPatch,
  MaxConcurrency,
  RateLimitPerSecond,
  RetryConfig,
  RetryConfigPatch,
  ScheduleConfig,
  ScheduleConfigPatch
} from "../../../src/campaign/campaignSettings.ts"
import { CampaignState } from "../../../src/campaign/campaignState.ts"
import { ImportStatus } from "../../../src/campaign/contactImport.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpPayloadTooLarge, HttpUpstreamFailed, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, IdFromPath, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"
import { DispatchStatusResponse } from "../campaignDispatch/schemas.ts"

const Name = Schema.String.pipe(
  Schema.trimmed({ message: () => "Name must not start or end with spaces" }),
  Schema.minLength(1),
  Schema.maxLength(255)
)
const Id = Schema.Int.pipe(Schema.positive())

const settingsFields = {
  telephony_configuration_id: Schema.optional(Schema.NullOr(Id)),
  retry_config: Schema.optional(RetryConfigPatch),
  max_concurrency: Schema.optional(Schema.NullOr(MaxConcurrency)),
  rate_limit_per_second: Schema.optional(RateLimitPerSecond),
  schedule_config: Schema.optional(Schema.NullOr(ScheduleConfigPatch)),
  circuit_breaker: Schema.optional(CircuitBreakerPatch)
}

export const CreateCampaignRequest = bodySchema("CreateCampaign", {
  name: Name,
  workflow_id: Id,
  source_type: Schema.Literal("csv"),
  source_id: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(1024)),
  default_region: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.length(2)))),
  ...settingsFields
})

export const UpdateCampaignRequest = bodySchema("UpdateCampaign", {
  name: Schema.optional(Name),
  ...settingsFields
})

export const RedialCampaignRequest = bodySchema("RedialCampaign", {
  name: Schema.optional(Name),
  retry_on_busy: Schema.optional(Schema.Boolean),
  retry_on_no_answer: Schema.optional(Schema.Boolean),
  retry_on_voicemail: Schema.optional(Schema.Boolean),
  retry_on_failed: Schema.optional(Schema.Boolean),
  retry_config: Schema.optional(RetryConfigPatch)
})

/** Loading the campaign's contacts; README "Campaigns" (large files load in the background). */
export const CampaignImport = Schema.Struct({
  status: ImportStatus,
  contacts_loaded: Schema.Int,
  bytes_read: Schema.Int,
  bytes_total: Schema.NullOr(Schema.Int),
  progress: Schema.Number,
  errors: Schema.Array(Schema.String)
}).annotations({ identifier: "CampaignImport" })

export const CampaignResponse = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  workflow_id: Schema.Int,
  workflow_name: Schema.String,
  state: CampaignState,
  source_type: Schema.Literal("csv"),
  source_id: Schema.String,
  default_region: Schema.NullOr(Schema.String),
  total_rows: Schema.NullOr(Schema.Int),
  processed_rows: Schema.Int,
  failed_rows: Schema.Int,
  created_at: Schema.Date,
  updated_at: Schema.Date,
  started_at: Schema.NullOr(Schema.Date),
  completed_at: Schema.NullOr(Schema.Date),
  retry_config: RetryConfig,
  max_concurrency: Schema.NullOr(Schema.Int),
  rate_limit_per_second: Schema.Int,
  schedule_config: Schema.NullOr(ScheduleConfig),
  circuit_breaker: CircuitBreakerConfig,
  executed_count: Schema.Int,
  total_queued_count: Schema.Int,
  parent_campaign_id: Schema.NullOr(Schema.Int),
  redialed_campaign_id: Schema.NullOr(Schema.Int),
  telephony_configuration_id: Schema.NullOr(Schema.Int),
  telephony_configuration_name: Schema.NullOr(Schema.String),
  logs: Schema.Array(CampaignLogEntry),
  warnings: Schema.Array(Schema.String),
  import: CampaignImport
}).annotations({ identifier: "CampaignResponse" })

const pagination = {
  page: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.positive()), { default: () => 1 }),
  limit: Schema.optionalWith(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 100)), { default: () => 20 })
}

export const CampaignListQuery = querySchema("CampaignList", pagination)
export const CampaignRunsQuery = querySchema("CampaignRuns", pagination)

export const CampaignListResponse = Schema.Struct({
  campaigns: Schema.Array(CampaignResponse),
  total_count: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int,
  total_pages: Schema.Int
}).annotations({ identifier: "CampaignListResponse" })

export const CampaignProgressResponse = Schema.Struct({
  campaign_id: Schema.Int,
  state: CampaignState,
  total_rows: Schema.Int,
  processed_rows: Schema.Int,
  failed_rows: Schema.Int,
  executed_count: Schema.Int,
  total_queued_count: Schema.Int,
  pending: Schema.Int,
  dialing: Schema.Int,
  completed: Schema.Int,
  failed: Schema.Int,
  cancelled: Schema.Int,
  live_calls: Schema.Int,
  next_attempt_at: Schema.NullOr(Schema.Date),
  started_at: Schema.NullOr(Schema.Date),
  completed_at: Schema.NullOr(Schema.Date),
  import: CampaignImport,
  dispatch: DispatchStatusResponse
}).annotations({ identifier: "CampaignProgressResponse" })

export const CampaignRunResponse = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  state: Schema.String,
  mode: Schema.String,
  direction: Schema.String,
  caller_number: Schema.NullOr(Schema.String),
  called_number: Schema.NullOr(Schema.String),
  contact_id: Schema.NullOr(Schema.Int),
  disposition: Schema.NullOr(Schema.String),
  end_reason: Schema.NullOr(Schema.String),
  duration_seconds: Schema.Number,
  created_at: Schema.Date,
  started_at: Schema.NullOr(Schema.Date),
  ended_at: Schema.NullOr(Schema.Date)
}).annotations({ identifier: "CampaignRunResponse" })

export const CampaignRunsResponse = Schema.Struct({
  runs: Schema.Array(CampaignRunResponse),
  total_count: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int,
  total_pages: Schema.Int
}).annotations({ identifier: "CampaignRunsResponse" })

const CampaignPath = pathSchema("Campaign", { campaign_id: IdFromPath })

const command = <const Name extends "start" | "pause" | "resume" | "cancel">(name: Name) =>
  HttpApiEndpoint.post(name, `/:campaign_id/${name}`)
    .setPath(CampaignPath)
    .addSuccess(CampaignResponse)
    .addError(HttpNotFound)
    .addError(HttpConflict)

export const CampaignsApi = HttpApiGroup.make("campaigns")
  .add(
    HttpApiEndpoint.post("create", "/create")
      .setPayload(CreateCampaignRequest)
      .addSuccess(CampaignResponse)
      .addError(HttpNotFound)
      .addError(HttpPayloadTooLarge)
      .addError(HttpUpstreamFailed)
  )
  .add(HttpApiEndpoint.get("list", "/").setUrlParams(CampaignListQuery).addSuccess(CampaignListResponse))
  .add(HttpApiEndpoint.get("get", "/:campaign_id").setPath(CampaignPath).addSuccess(CampaignResponse).addError(HttpNotFound))
  .add(
    HttpApiEndpoint.patch("update", "/:campaign_id")
      .setPath(CampaignPath)
      .setPayload(UpdateCampaignRequest)
      .addSuccess(CampaignResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(command("start"))
  .add(command("pause"))
  .add(command("resume"))
  .add(command("cancel"))
  .add(
    HttpApiEndpoint.post("redial", "/:campaign_id/redial")
      .setPath(CampaignPath)
      .setPayload(RedialCampaignRequest)
      .addSuccess(CampaignResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.get("progress", "/:campaign_id/progress")
      .setPath(CampaignPath)
      .addSuccess(CampaignProgressResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("runs", "/:campaign_id/runs")
      .setPath(CampaignPath)
      .setUrlParams(CampaignRunsQuery)
      .addSuccess(CampaignRunsResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("report", "/:campaign_id/report")
      .setPath(CampaignPath)
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })))
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .addError(HttpValidationFailed)
  .middleware(V1Auth)
  .prefix("/api/v1/campaign")
