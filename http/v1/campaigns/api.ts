import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { CallerIdPoolInput } from "../../../src/campaigns/callerIdPool.ts"
import { CampaignProgress } from "../../../src/campaigns/campaignProgress.ts"
import { Campaign, CampaignRun } from "../../../src/campaigns/campaignRecord.ts"
import {
  CircuitBreakerPatch,
  MaxConcurrency,
  RateLimitPerSecond,
  RetryConfigPatch,
  ScheduleConfigPatch
} from "../../../src/campaigns/campaignSettings.ts"
import { CampaignVoicemail } from "../../../src/campaigns/campaignVoicemail.ts"
import { CallingHours } from "../../../src/compliance/callingHours.ts"
import {
  HttpConflict,
  HttpForbidden,
  HttpNotFound,
  HttpPayloadTooLarge,
  HttpUpstreamFailed,
  HttpValidationFailed
} from "../../errors.ts"
import { bodySchema, IdFromPath, IntFromString, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

const Name = Schema.String.pipe(
  Schema.trimmed({ message: () => "Name must not start or end with spaces" }),
  Schema.minLength(1),
  Schema.maxLength(255)
)
const Id = Schema.Int.pipe(Schema.positive())

/** Omitted: unchanged (the default on create). `null`: the setting's default (no limit, no schedule). */
const settingsFields = {
  telephony_configuration_id: Schema.optional(Schema.NullOr(Id.pipe(Schema.brand("TelephonyConfigId")))),
  retry_config: Schema.optional(Schema.NullOr(RetryConfigPatch)),
  max_concurrency: Schema.optional(Schema.NullOr(MaxConcurrency)),
  rate_limit_per_second: Schema.optional(Schema.NullOr(RateLimitPerSecond)),
  schedule_config: Schema.optional(Schema.NullOr(ScheduleConfigPatch)),
  calling_hours: Schema.optional(Schema.NullOr(CallingHours)),
  caller_id_pool: Schema.optional(Schema.NullOr(CallerIdPoolInput)),
  circuit_breaker: Schema.optional(Schema.NullOr(CircuitBreakerPatch)),
  /** Checked in full by the service (the agent's voicemail rules), so it answers the same 422s. */
  voicemail: Schema.optional(Schema.NullOr(CampaignVoicemail))
}

export const CreateCampaignRequest = bodySchema("CreateCampaign", {
  name: Name,
  workflow_id: Id.pipe(Schema.brand("WorkflowId")),
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
  retry_config: Schema.optional(Schema.NullOr(RetryConfigPatch))
})

/** The campaign resource is defined once, in src/campaigns/campaignRecord.ts. */
export const CampaignResponse = Campaign

const pagination = {
  page: Schema.optionalWith(IntFromString({ minimum: 1, description: "Page number (default 1)" }), {
    default: () => 1
  }),
  limit: Schema.optionalWith(IntFromString({ minimum: 1, maximum: 100, description: "Items per page (default 20)" }), {
    default: () => 20
  })
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

export const CampaignProgressResponse = CampaignProgress

/** `event: progress` frames, each a CampaignProgressResponse; see the endpoint's description. */
export const CampaignProgressEventStream = Schema.String.pipe(
  HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/event-stream" })
).annotations({ identifier: "CampaignProgressEventStream" })

export const CampaignRunResponse = CampaignRun

export const CampaignRunsResponse = Schema.Struct({
  runs: Schema.Array(CampaignRunResponse),
  total_count: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int,
  total_pages: Schema.Int
}).annotations({ identifier: "CampaignRunsResponse" })

const CampaignPath = pathSchema("Campaign", { campaign_id: IdFromPath.pipe(Schema.brand("CampaignId")) })

const command = <const Name extends "start" | "pause" | "resume" | "cancel">(
  name: Name,
  summary: string,
  description: string
) =>
  HttpApiEndpoint.post(name, `/:campaign_id/${name}`)
    .annotate(OpenApi.Summary, summary)
    .annotate(OpenApi.Description, description)
    .setPath(CampaignPath)
    .addSuccess(CampaignResponse)
    .addError(HttpNotFound)
    .addError(HttpConflict)

export const CampaignsApi = HttpApiGroup.make("campaigns")
  .annotate(
    OpenApi.Description,
    "Campaigns that call a list of contacts with an agent. Reading needs `campaigns:read`, every change `campaigns:write`."
  )
  .add(
    HttpApiEndpoint.post("create", "/create")
      .annotate(OpenApi.Summary, "Create a campaign")
      .annotate(
        OpenApi.Description,
        "Imports the contacts CSV uploaded at `source_id` and stores the campaign, ready to start. Numbers are normalised to E.164; invalid and duplicate ones are skipped and reported in `warnings`. A setting omitted or `null` takes its default."
      )
      .setPayload(CreateCampaignRequest)
      .addSuccess(CampaignResponse)
      .addError(HttpNotFound)
      .addError(HttpPayloadTooLarge)
      .addError(HttpUpstreamFailed)
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .annotate(OpenApi.Summary, "List campaigns")
      .annotate(OpenApi.Description, "The organization's campaigns, newest first, paginated with `page` and `limit`.")
      .setUrlParams(CampaignListQuery)
      .addSuccess(CampaignListResponse)
  )
  .add(
    HttpApiEndpoint.get("get", "/:campaign_id")
      .annotate(OpenApi.Summary, "Get a campaign")
      .annotate(OpenApi.Description, "One campaign with its settings, counters and log.")
      .setPath(CampaignPath)
      .addSuccess(CampaignResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.patch("update", "/:campaign_id")
      .annotate(OpenApi.Summary, "Change a campaign")
      .annotate(
        OpenApi.Description,
        "Renames the campaign and changes its settings while it is created or paused (409 otherwise). An omitted setting is unchanged; `null` resets it to its default."
      )
      .setPath(CampaignPath)
      .setPayload(UpdateCampaignRequest)
      .addSuccess(CampaignResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(command(
    "start",
    "Start a campaign",
    "Starts dialling (created → running). Needs a usable telephony configuration (422 saying why otherwise); 409 with the current state when the campaign cannot start."
  ))
  .add(command(
    "pause",
    "Pause a campaign",
    "Stops placing new calls (running → paused); calls in progress finish. 409 with the current state when not running."
  ))
  .add(command(
    "resume",
    "Resume a campaign",
    "Continues dialling a paused campaign (paused → running), with a fresh circuit-breaker window. 409 with the current state when not paused."
  ))
  .add(command(
    "cancel",
    "Cancel a campaign",
    "Ends the campaign for good and withdraws the contacts not yet called. 409 when it has already ended."
  ))
  .add(
    HttpApiEndpoint.post("redial", "/:campaign_id/redial")
      .annotate(OpenApi.Summary, "Redial a finished campaign")
      .annotate(
        OpenApi.Description,
        "Creates a child campaign of the contacts whose last outcome matches the chosen reasons (busy, no answer, voicemail, failed), once per campaign. A `retry_config` omitted or `null` keeps the parent's."
      )
      .setPath(CampaignPath)
      .setPayload(RedialCampaignRequest)
      .addSuccess(CampaignResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.get("progress", "/:campaign_id/progress")
      .annotate(OpenApi.Summary, "Campaign progress")
      .annotate(
        OpenApi.Description,
        "Counters by contact state and the dialer's live view: rate achieved, live calls, circuit breaker and calling window."
      )
      .setPath(CampaignPath)
      .addSuccess(CampaignProgressResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("progressStream", "/:campaign_id/progress/stream")
      .annotate(OpenApi.Summary, "Follow a campaign's progress")
      .annotate(
        OpenApi.Description,
        "Server-sent events: an `event: progress` frame holding a CampaignProgressResponse at once, then one each time the progress changes, and a `: heartbeat` comment every 15 seconds; the stream ends after the campaign completes, is cancelled or fails. However many follow a campaign, the server reads its progress once per change."
      )
      .setPath(CampaignPath)
      .addSuccess(CampaignProgressEventStream)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("runs", "/:campaign_id/runs")
      .annotate(OpenApi.Summary, "List a campaign's calls")
      .annotate(OpenApi.Description, "The calls the campaign placed, newest first, paginated with `page` and `limit`.")
      .setPath(CampaignPath)
      .setUrlParams(CampaignRunsQuery)
      .addSuccess(CampaignRunsResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("report", "/:campaign_id/report")
      .annotate(OpenApi.Summary, "Export a campaign as CSV")
      .annotate(
        OpenApi.Description,
        "Every contact with its outcome and its original CSV columns, streamed. Text cells a spreadsheet would run as a formula are prefixed with `'`."
      )
      .setPath(CampaignPath)
      .addSuccess(Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" })))
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .addError(HttpValidationFailed)
  .middleware(V1Auth)
  .prefix("/api/v1/campaign")
