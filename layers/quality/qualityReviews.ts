import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { AppConfig } from "../../services/AppConfig.ts"
import { LlmChat } from "../../services/LlmChat.ts"
import { LlmGenerator } from "../../services/LlmGenerator.ts"
import { ModelSettings } from "../../services/ModelSettings.ts"
import { QualityReviews, type ReviewSelection } from "../../services/QualityReviews.ts"
import { csvLine } from "../../src/csv/csvWriter.ts"
import { NotFound } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { ReviewTags } from "../../src/quality/qualityReview.ts"
import type { QualityDay } from "../../src/quality/reviewView.ts"
import { makeQualityReviewer } from "./qualityReviewer.ts"

/** How often an idle reviewer looks for finished runs to review. */
const POLL = "1 second"

interface DayRow {
  readonly day: string
  readonly reviewed: number
  readonly failed: number
  readonly mean_score: number | null
}

interface ExportRow {
  readonly run_id: string
  readonly workflow_id: string
  readonly agent_name: string
  readonly status: string
  readonly rubric: string | null
  readonly model: string | null
  readonly score: number | null
  readonly tags: unknown
  readonly sentiment: string | null
  readonly summary: string | null
  readonly result: unknown
  readonly failure: string | null
  readonly reviewed_at: Date | null
}

const jsonOf = (value: unknown) => (typeof value === "string" ? JSON.parse(value) : value)

const EXPORT_HEADER = [
  "run_id",
  "agent_id",
  "agent_name",
  "status",
  "rubric",
  "model",
  "score",
  "tags",
  "sentiment",
  "summary",
  "result",
  "failure",
  "reviewed_at"
]

/** Reviews read scoped to the caller's organization, and the background reviewer. */
export const QualityReviewsLive = Layer.scoped(
  QualityReviews,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const reviewer = makeQualityReviewer({
      sql,
      modelSettings: yield* ModelSettings,
      generator: yield* LlmGenerator,
      chat: yield* LlmChat,
      onPostgres: Option.isSome((yield* AppConfig).databaseUrl)
    })
    yield* Effect.forkScoped(
      reviewer.drain.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Quality reviewer pass failed", cause)),
        Effect.zipRight(Effect.sleep(POLL)),
        Effect.forever
      )
    )

    const agentOf = (principal: Principal, agentId: number) =>
      sql`SELECT 1 FROM workflows WHERE id = ${agentId} AND organization_id = ${principal.organizationId}`.pipe(
        Effect.flatMap((rows) =>
          rows.length === 0 ? Effect.fail(new NotFound({ resource: "Agent", id: agentId })) : Effect.void
        )
      )

    const perDay = Effect.fn("QualityReviews.perDay")(function*(
      principal: Principal,
      agentId: number,
      window: { readonly from?: Date | undefined; readonly before?: Date | undefined }
    ) {
      yield* agentOf(principal, agentId)
      const dayOf = sql.literal("to_char(q.reviewed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')")
      const scope = sql`q.organization_id = ${principal.organizationId} AND q.workflow_id = ${agentId}
          ${window.from ? sql`AND q.reviewed_at >= ${window.from}` : sql``}
          ${window.before ? sql`AND q.reviewed_at < ${window.before}` : sql``}`
      const rows = yield* sql<DayRow>`
        SELECT ${dayOf} AS day,
               count(*) FILTER (WHERE q.status = 'reviewed')::integer AS reviewed,
               count(*) FILTER (WHERE q.status = 'failed')::integer AS failed,
               avg(q.score)::float8 AS mean_score
        FROM quality_reviews q
        WHERE ${scope} AND q.status IN ('reviewed', 'failed')
        GROUP BY 1 ORDER BY 1`
      const tagged = yield* sql<{ day: string; tag: string; n: number }>`
        SELECT ${dayOf} AS day, t.tag, count(*)::integer AS n
        FROM quality_reviews q, jsonb_array_elements_text(q.tags) AS t (tag)
        WHERE ${scope} AND q.status = 'reviewed'
        GROUP BY 1, 2`
      return rows.map((row): QualityDay => ({
        date: row.day,
        reviewed: row.reviewed,
        failed: row.failed,
        mean_score: row.mean_score === null ? null : Math.round(Number(row.mean_score) * 100) / 100,
        tags: Object.fromEntries(ReviewTags.map((tag) => [
          tag,
          Number(tagged.find((count) => count.day === row.day && count.tag === tag)?.n ?? 0)
        ]))
      }))
    }, Effect.catchTag("SqlError", Effect.die))

    const exportCsv = Effect.fn("QualityReviews.exportCsv")(
      function*(principal: Principal, selection: ReviewSelection) {
        if (selection.agentId !== undefined) yield* agentOf(principal, selection.agentId)
        const rows = yield* sql<ExportRow>`
        SELECT q.run_id, q.workflow_id, w.name AS agent_name, q.status, q.rubric, q.model, q.score, q.tags,
               q.sentiment, q.summary, q.result, q.failure, q.reviewed_at
        FROM quality_reviews q JOIN workflows w ON w.id = q.workflow_id
        WHERE q.organization_id = ${principal.organizationId} AND q.status IN ('reviewed', 'failed')
          ${selection.agentId === undefined ? sql`` : sql`AND q.workflow_id = ${selection.agentId}`}
          ${selection.from ? sql`AND q.reviewed_at >= ${selection.from}` : sql``}
          ${selection.before ? sql`AND q.reviewed_at < ${selection.before}` : sql``}
          ${selection.minScore === undefined ? sql`` : sql`AND q.score >= ${selection.minScore}`}
          ${selection.maxScore === undefined ? sql`` : sql`AND q.score <= ${selection.maxScore}`}
          ${
          selection.tag === undefined
            ? sql``
            : sql`AND EXISTS (SELECT 1 FROM jsonb_array_elements_text(q.tags) AS t (tag) WHERE t.tag = ${selection.tag})`
        }
        ORDER BY q.reviewed_at DESC, q.run_id DESC`
        return csvLine(EXPORT_HEADER) + rows.map((row) =>
          csvLine([
            Number(row.run_id),
            Number(row.workflow_id),
            row.agent_name,
            row.status,
            row.rubric,
            row.model,
            row.score,
            (jsonOf(row.tags) as Array<string>).join(" "),
            row.sentiment,
            row.summary,
            row.result === null ? null : JSON.stringify(jsonOf(row.result)),
            row.failure,
            row.reviewed_at
          ])
        ).join("")
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    return QualityReviews.of({ perDay, exportCsv })
  })
)
