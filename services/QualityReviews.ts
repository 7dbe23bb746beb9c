import { Context, type Effect } from "effect"
import type { NotFound } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { QualityDay } from "../src/quality/reviewView.ts"

/** Which reviews an export lists: an agent, a window of review times (`before` exclusive), a score range, a tag. */
export interface ReviewSelection {
  readonly agentId?: number | undefined
  readonly from?: Date | undefined
  readonly before?: Date | undefined
  readonly minScore?: number | undefined
  readonly maxScore?: number | undefined
  readonly tag?: string | undefined
}

/**
 * Quality reviews of finished runs (the agents' `quality_review` setting), read scoped to the
 * caller's organization. Reviewing itself is a background worker of the live layer.
 */
export interface QualityReviewsShape {
  /** Per UTC day of review: how many were reviewed and failed, the mean score, each tag's count. */
  readonly perDay: (
    principal: Principal,
    agentId: number,
    window: { readonly from?: Date | undefined; readonly before?: Date | undefined }
  ) => Effect.Effect<ReadonlyArray<QualityDay>, NotFound>
  /** The finished reviews as CSV (one row per run), newest first. */
  readonly exportCsv: (principal: Principal, selection: ReviewSelection) => Effect.Effect<string, NotFound>
}

export class QualityReviews extends Context.Tag("talkgraph/QualityReviews")<QualityReviews, QualityReviewsShape>() {}
