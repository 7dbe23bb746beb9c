import type { SqlClient } from "@effect/sql"
import { Chunk, Effect, Option, Stream } from "effect"
import type { CampaignReport } from "../../services/Campaigns.ts"
import { csvLine } from "../../src/csv/csvWriter.ts"
import type { CampaignRow } from "./campaignRows.ts"

interface ReportRow {
  readonly id: number
  readonly row_number: number
  readonly phone_number: string
  readonly state: string
  readonly attempt_count: number
  readonly last_outcome: string | null
  readonly last_attempt_at: Date | null
  readonly last_run_id: number | null
  readonly disposition: string | null
  readonly duration_seconds: number | null
  readonly context: Record<string, string>
}

const PAGE = 2000

const fixedColumns = [
  "row_number",
  "phone_number",
  "contact_state",
  "attempts",
  "last_outcome",
  "last_attempt_at",
  "last_run_id",
  "disposition",
  "duration_seconds"
]

/**
 * One line per contact: its outcome, then its original CSV columns. Read in keyset pages, so the
 * report of a million contacts streams in constant memory.
 */
export const campaignReport = (sql: SqlClient.SqlClient, campaign: CampaignRow): CampaignReport => {
  const columns = campaign.source_columns.filter((name) =>
    name.toLowerCase() !== "phone_number" && !name.toLowerCase().startsWith("greeting_override_")
  )
  const page = (after: number) =>
    sql<ReportRow>`
      SELECT c.id, c.row_number, c.phone_number, c.state, c.attempt_count,
             -- A skipped contact has no call: why it was skipped is its outcome (dnc, …).
             COALESCE(c.last_outcome, c.skip_reason) AS last_outcome, c.last_attempt_at, c.last_run_id,
             r.disposition, r.duration_seconds, c.context
      FROM campaign_contacts c
      LEFT JOIN runs r ON r.id = c.last_run_id
      WHERE c.campaign_id = ${campaign.id} AND c.id > ${after}
      ORDER BY c.id LIMIT ${PAGE}`.pipe(Effect.orDie)
  const lines = Stream.paginateChunkEffect(0, (after: number) =>
    Effect.map(page(after), (rows) => {
      const text = rows.map((row) =>
        csvLine([
          row.row_number,
          row.phone_number,
          row.state,
          row.attempt_count,
          row.last_outcome,
          row.last_attempt_at,
          row.last_run_id,
          row.disposition,
          row.duration_seconds,
          // Own keys only: a column named `constructor` or `toString` is data, not what objects inherit.
          ...columns.map((name) => (Object.hasOwn(row.context, name) ? row.context[name] : null))
        ])
      ).join("")
      const last = rows[rows.length - 1]
      return [Chunk.of(text), rows.length === PAGE && last ? Option.some(last.id) : Option.none()] as const
    }))
  return {
    fileName: `campaign-${campaign.id}-report.csv`,
    csv: Stream.concat(Stream.make(csvLine([...fixedColumns, ...columns])), lines)
  }
}
