import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { ReviewTags } from "../../../src/quality/qualityReview.ts"
import { QualityDay } from "../../../src/quality/reviewView.ts"
import { HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { IdFromPath, IntFromString, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V2Auth } from "../../security.ts"
import { Resource } from "../envelopes.ts"

const windowFields = {
  from: Schema.optional(Schema.String.annotations({
    description: "Reviewed at or after (ISO 8601 date or date-time, UTC unless an offset is given)"
  })),
  to: Schema.optional(Schema.String.annotations({
    description: "Reviewed at or before (inclusive; a date alone means that whole day)"
  }))
}

const AgentQualityPath = pathSchema("AgentQuality", { agent_id: IdFromPath })
const AgentQualityQuery = querySchema("AgentQuality", windowFields)

const ReviewExportQuery = querySchema("QualityReviewExport", {
  ...windowFields,
  agent_id: Schema.optional(IntFromString({ minimum: 1, description: "Only this agent's reviews" })),
  min_score: Schema.optional(IntFromString({ minimum: 1, maximum: 10, description: "Score at least (1–10)" })),
  max_score: Schema.optional(IntFromString({ minimum: 1, maximum: 10, description: "Score at most (1–10)" })),
  tag: Schema.optional(Schema.Literal(...ReviewTags).annotations({ description: "Only reviews with this issue tag" }))
})

export const AgentQuality = Schema.Struct({
  agent_id: Schema.Int,
  days: Schema.Array(QualityDay)
}).annotations({ identifier: "V2_AgentQuality" })

const ReviewCsv = Schema.String.pipe(HttpApiSchema.withEncoding({ kind: "Text", contentType: "text/csv" }))

/** Quality reviews of agents' conversations; needs the `conversations:read` scope. */
export const QualityApi = HttpApiGroup.make("quality")
  .annotate(
    OpenApi.Description,
    "Quality reviews of finished conversations (an agent's `quality_review` setting). Needs an API key with `conversations:read`."
  )
  .add(
    HttpApiEndpoint.get("perDay", "/api/v2/agents/:agent_id/quality")
      .annotate(OpenApi.Summary, "An agent's quality per day")
      .annotate(
        OpenApi.Description,
        "Per UTC day of review: reviews done and failed, the mean score and each issue tag's count (default rubric)."
      )
      .setPath(AgentQualityPath)
      .setUrlParams(AgentQualityQuery)
      .addSuccess(Resource(AgentQuality))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.get("export", "/api/v2/quality-reviews/export")
      .annotate(OpenApi.Summary, "Export quality reviews as CSV")
      .annotate(
        OpenApi.Description,
        "Finished reviews (reviewed or failed), newest first, narrowed by agent, review time, score and tag."
      )
      .setUrlParams(ReviewExportQuery)
      .addSuccess(ReviewCsv)
      .addError(HttpNotFound)
  )
  .addError(HttpValidationFailed)
  .addError(HttpForbidden)
  .middleware(V2Auth)
