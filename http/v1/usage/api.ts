import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Either, ParseResult, Schema } from "effect"
import { JsonObject, Timestamp } from "../../../src/domain/wireTypes.ts"
import { QualityReviewView } from "../../../src/quality/reviewView.ts"
import { type DateBound, parseDateBound } from "../../../src/usage/dates.ts"
import { parseUsageFilters, type UsageFilter } from "../../../src/usage/filters.ts"
import { DEFAULT_LIMIT, DEFAULT_PAGE, MAX_LIMIT } from "../../../src/usage/pagination.ts"
import type { SortBy } from "../../../src/usage/query.ts"
import { HttpForbidden, HttpValidationFailed } from "../../errors.ts"
import { IntFromString, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

/** A query string parsed by one of the pure `src/usage` readers; their message becomes the 422 `msg`. */
const parsedFrom = <A>(
  identifier: string,
  description: string,
  parse: (raw: string) => Either.Either<A, string>,
  encode: (value: A) => string
) =>
  Schema.transformOrFail(
    Schema.String.annotations({ description }),
    Schema.declare((input: unknown): input is A => input !== undefined, { identifier }),
    {
      strict: true,
      decode: (raw, _, ast) =>
        Either.match(parse(raw), {
          onLeft: (message) => ParseResult.fail(new ParseResult.Type(ast, raw, message)),
          onRight: (value) => ParseResult.succeed(value)
        }),
      encode: (value) => ParseResult.succeed(encode(value))
    }
  )

const DateBoundParam = parsedFrom<DateBound>(
  "DateBound",
  "ISO 8601 date-time, UTC unless an offset is given (a date alone means that whole day); inclusive",
  parseDateBound,
  (bound) => bound.instant.toISOString()
)

const FiltersParam = parsedFrom<ReadonlyArray<UsageFilter>>(
  "UsageFilters",
  "JSON array of {attribute, type, value} filter objects; unknown attributes and types are ignored",
  parseUsageFilters,
  () => "[]"
)

const criteriaFields = {
  start_date: Schema.optional(DateBoundParam),
  end_date: Schema.optional(DateBoundParam),
  filters: Schema.optionalWith(FiltersParam, { default: () => [] })
}

const orderingFields = {
  // Only `duration` is named by the spec; any other value keeps the default order.
  sort_by: Schema.optionalWith(
    Schema.transform(Schema.String, Schema.Literal("created_at", "duration"), {
      strict: true,
      decode: (value): SortBy => (value === "duration" ? "duration" : "created_at"),
      encode: (value) => value
    }).annotations({
      jsonSchema: {
        type: "string",
        enum: ["created_at", "duration"],
        description: "Order by creation time (the default) or duration"
      }
    }),
    { default: () => "created_at" as const }
  ),
  sort_order: Schema.optionalWith(
    Schema.Literal("asc", "desc").annotations({ description: "desc (the default) or asc; ties are broken by run id" }),
    { default: () => "desc" as const }
  )
}

export const UsageRunsQuery = querySchema("UsageRuns", {
  ...criteriaFields,
  ...orderingFields,
  page: Schema.optionalWith(IntFromString({ minimum: 1, description: `Page number (default ${DEFAULT_PAGE})` }), {
    default: () => DEFAULT_PAGE
  }),
  limit: Schema.optionalWith(
    IntFromString({ minimum: 1, maximum: MAX_LIMIT, description: `Runs per page (default ${DEFAULT_LIMIT})` }),
    { default: () => DEFAULT_LIMIT }
  )
})

export const UsageReportQuery = querySchema("UsageReport", { ...criteriaFields, ...orderingFields })

export const UsageBreakdownQuery = querySchema("UsageBreakdown", criteriaFields)

export const WorkflowRunUsageResponse = Schema.Struct({
  id: Schema.Int,
  workflow_id: Schema.Int,
  workflow_name: Schema.NullOr(Schema.String),
  name: Schema.String,
  created_at: Timestamp,
  call_duration_seconds: Schema.Int,
  service_tokens: Schema.Int,
  caller_number: Schema.NullOr(Schema.String),
  called_number: Schema.NullOr(Schema.String),
  direction: Schema.String,
  mode: Schema.String,
  channel: Schema.String,
  disposition: Schema.NullOr(Schema.String),
  campaign_id: Schema.NullOr(Schema.Int),
  initial_context: JsonObject,
  gathered_context: JsonObject,
  recording_url: Schema.NullOr(Schema.String),
  transcript_url: Schema.NullOr(Schema.String),
  quality_review: Schema.NullOr(QualityReviewView).annotations({
    description:
      "The run's quality review (the agent's quality_review setting); null when the agent does not review runs"
  })
}).annotations({ identifier: "WorkflowRunUsageResponse" })

export const UsageHistoryResponse = Schema.Struct({
  runs: Schema.Array(WorkflowRunUsageResponse),
  total_service_tokens: Schema.Int,
  total_duration_seconds: Schema.Int,
  total_count: Schema.Int,
  page: Schema.Int,
  limit: Schema.Int,
  total_pages: Schema.Int
}).annotations({ identifier: "UsageHistoryResponse" })

export const DailyUsage = Schema.Struct({
  date: Schema.String.annotations({ jsonSchema: { type: "string", format: "date" } }),
  runs: Schema.Int,
  duration_seconds: Schema.Int,
  minutes: Schema.Number,
  service_tokens: Schema.Int
}).annotations({ identifier: "DailyUsage" })

export const DailyUsageBreakdownResponse = Schema.Struct({
  timezone: Schema.String,
  days: Schema.Array(DailyUsage),
  total_runs: Schema.Int,
  total_duration_seconds: Schema.Int,
  total_minutes: Schema.Number,
  total_service_tokens: Schema.Int
}).annotations({ identifier: "DailyUsageBreakdownResponse" })

const UsageCsv = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" }))

export const UsageApi = HttpApiGroup.make("usage")
  .annotate(
    OpenApi.Description,
    "Usage reports over the organization's calls and chats (runs). API keys need the `usage:read` scope."
  )
  .add(
    HttpApiEndpoint.get("runs", "/runs")
      .annotate(OpenApi.Summary, "List runs with usage totals")
      .annotate(
        OpenApi.Description,
        "A page of runs with their duration and tokens, and totals over every matching run (not only the page). Narrow them with `start_date`, `end_date` and `filters`; order them with `sort_by` and `sort_order`."
      )
      .setUrlParams(UsageRunsQuery)
      .addSuccess(UsageHistoryResponse)
  )
  .add(
    HttpApiEndpoint.get("report", "/runs/report")
      .annotate(OpenApi.Summary, "Export runs as CSV")
      .annotate(
        OpenApi.Description,
        "The runs the list would return, as a streamed CSV download without paging. Text cells a spreadsheet would run as a formula are prefixed with `'`."
      )
      .setUrlParams(UsageReportQuery)
      .addSuccess(UsageCsv)
  )
  .add(
    HttpApiEndpoint.get("dailyBreakdown", "/daily-breakdown")
      .annotate(OpenApi.Summary, "Usage per day")
      .annotate(
        OpenApi.Description,
        "Runs, minutes and tokens per day over the date range, days cut in the organization's time zone, days without runs included."
      )
      .setUrlParams(UsageBreakdownQuery)
      .addSuccess(DailyUsageBreakdownResponse)
  )
  .addError(HttpForbidden)
  .addError(HttpValidationFailed)
  .middleware(V1Auth)
  .prefix("/api/v1/organizations/usage")
