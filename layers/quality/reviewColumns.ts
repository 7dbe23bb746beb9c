/**
 * The run's review as one jsonb column in the shape of `QualityReviewView`, for the queries that
 * serialize runs (`alias` is the runs table's alias in the query).
 */
export const qualityReviewColumn = (alias: string) => `
  (SELECT jsonb_build_object(
     'status', q.status, 'rubric', q.rubric, 'model', q.model, 'score', q.score, 'tags', q.tags,
     'sentiment', q.sentiment, 'summary', q.summary, 'result', q.result, 'skip_reason', q.skip_reason,
     'failure', q.failure,
     'reviewed_at', to_char(q.reviewed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))
   FROM quality_reviews q WHERE q.run_id = ${alias}.id) AS quality_review`
