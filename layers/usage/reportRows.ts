import type { Statement } from "@effect/sql"
import type { UsageRunView } from "../../services/UsageReports.ts"
import { reviewViewOf } from "../../src/quality/reviewView.ts"
import type { ArtifactKind } from "../../src/usage/artifactLinks.ts"
import { qualityReviewColumn } from "../quality/reviewColumns.ts"

/** A run as the report reads it (joined with its workflow's name). */
export interface UsageRunRow {
  readonly id: number
  readonly workflow_id: number
  readonly workflow_name: string | null
  readonly name: string
  readonly created_at: Date
  /** `created_at` as PostgreSQL text: the exact key for resuming an export after this row. */
  readonly created_key: string
  readonly duration_seconds: number
  readonly service_tokens: number
  readonly caller_number: string | null
  readonly called_number: string | null
  readonly direction: string
  readonly mode: string
  readonly channel: string
  readonly disposition: string | null
  readonly campaign_id: number | null
  readonly has_recording: boolean
  readonly has_transcript: boolean
}

export interface UsageRunDetailRow extends UsageRunRow {
  readonly initial_context: Record<string, unknown>
  readonly gathered_context: Record<string, unknown>
  readonly quality_review: unknown
}

/** Columns of `runs r` / `workflows w` for a report row; JSON columns only when they are shown. */
export const runColumns = (sql: Statement.Constructor, withContext: boolean): Statement.Fragment =>
  sql.literal(
    [
      "r.id",
      "r.workflow_id",
      "w.name AS workflow_name",
      "r.name",
      "r.created_at",
      "r.created_at::text AS created_key",
      "r.duration_seconds",
      "r.service_tokens",
      "r.caller_number",
      "r.called_number",
      "r.direction",
      "r.mode",
      "r.channel",
      "r.disposition",
      "r.campaign_id",
      "r.recording_key IS NOT NULL AS has_recording",
      "r.transcript_key IS NOT NULL AS has_transcript",
      ...(withContext ? ["r.initial_context", "r.gathered_context", qualityReviewColumn("r")] : [])
    ].join(", ")
  )

export const toRunView = (
  row: UsageRunDetailRow,
  link: (runId: number, kind: ArtifactKind) => string | null
): UsageRunView => ({
  id: row.id,
  workflow_id: row.workflow_id,
  workflow_name: row.workflow_name,
  name: row.name,
  created_at: row.created_at,
  call_duration_seconds: row.duration_seconds,
  service_tokens: row.service_tokens,
  caller_number: row.caller_number,
  called_number: row.called_number,
  direction: row.direction,
  mode: row.mode,
  channel: row.channel,
  disposition: row.disposition,
  campaign_id: row.campaign_id,
  initial_context: row.initial_context,
  gathered_context: row.gathered_context,
  recording_url: row.has_recording ? link(row.id, "recording") : null,
  transcript_url: row.has_transcript ? link(row.id, "transcript") : null,
  quality_review: reviewViewOf(row.quality_review)
})

export const csvHeader = [
  "id",
  "created_at",
  "workflow_id",
  "workflow_name",
  "name",
  "direction",
  "channel",
  "mode",
  "caller_number",
  "called_number",
  "disposition",
  "campaign_id",
  "call_duration_seconds",
  "service_tokens"
] as const

export const csvCells = (row: UsageRunRow) => [
  row.id,
  row.created_at.toISOString(),
  row.workflow_id,
  row.workflow_name,
  row.name,
  row.direction,
  row.channel,
  row.mode,
  row.caller_number,
  row.called_number,
  row.disposition,
  row.campaign_id,
  row.duration_seconds,
  row.service_tokens
]
