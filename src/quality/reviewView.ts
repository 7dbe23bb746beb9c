import { Schema } from "effect"
import { JsonObject, TimestampText } from "../domain/wireTypes.ts"

/** A run's quality review as shown on the run (`quality_review`, null when the agent does not review). */
export const QualityReviewView = Schema.Struct({
  status: Schema.Literal("pending", "reviewing", "reviewed", "skipped", "failed"),
  rubric: Schema.NullOr(Schema.Literal("default", "custom")),
  model: Schema.NullOr(Schema.String),
  score: Schema.NullOr(Schema.Int).annotations({ description: "1–10 (default rubric)" }),
  tags: Schema.Array(Schema.String).annotations({ description: "Issue tags (default rubric)" }),
  sentiment: Schema.NullOr(Schema.String),
  summary: Schema.NullOr(Schema.String),
  result: Schema.NullOr(JsonObject).annotations({ description: "The reviewer's JSON answer as parsed" }),
  skip_reason: Schema.NullOr(Schema.String).annotations({
    description: "Why the run was not reviewed: too_short, voicemail, not_sampled, disabled"
  }),
  failure: Schema.NullOr(Schema.String).annotations({
    description: "Why the review failed (e.g. the answer was not valid)"
  }),
  reviewed_at: Schema.NullOr(TimestampText)
}).annotations({ identifier: "QualityReview" })
export type QualityReviewView = typeof QualityReviewView.Type

/** One agent's reviews on one day (UTC). */
export const QualityDay = Schema.Struct({
  date: Schema.String.annotations({ jsonSchema: { type: "string", format: "date" } }),
  reviewed: Schema.Int,
  failed: Schema.Int,
  mean_score: Schema.NullOr(Schema.Number),
  tags: Schema.Record({ key: Schema.String, value: Schema.Int })
}).annotations({ identifier: "QualityDay" })
export type QualityDay = typeof QualityDay.Type

/** Reads a `quality_review` column built by `qualityReviewColumn` (jsonb, null when none). */
export const reviewViewOf = (raw: unknown): QualityReviewView | null => {
  const value = typeof raw === "string" ? JSON.parse(raw) : raw
  return value === null || value === undefined ? null : (value as QualityReviewView)
}
