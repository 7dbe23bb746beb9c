import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { CampaignRunView, Paging } from "../../services/Campaigns.ts"
import { importProgress } from "../../src/campaigns/contactImport.ts"
import type { SkipReason } from "../../src/compliance/doNotCallEntry.ts"
import type { CampaignId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { makeCampaignLookups } from "./campaignLookups.ts"
import { campaignReport } from "./campaignReport.ts"
import { type CampaignRow, selectCampaigns, toView } from "./campaignRows.ts"
import { makeDispatchStatus } from "./dispatchStatus.ts"

const pageCount = (total: number, limit: number) => Math.max(1, Math.ceil(total / limit))

/** The campaign reads: list, one campaign, its progress with the dialer's live figures, its runs and its report. */
export const makeCampaignReads = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const { findRow } = yield* makeCampaignLookups
  const dispatchStatus = yield* makeDispatchStatus

  const list = Effect.fn("Campaigns.list")(function*(principal: Principal, paging: Paging) {
    const [count] = yield* sql<{ total: number }>`
      SELECT count(*)::int AS total FROM campaigns WHERE organization_id = ${principal.organizationId}`
    const rows = yield* sql<CampaignRow>`
      ${selectCampaigns(sql)} WHERE c.organization_id = ${principal.organizationId}
      ORDER BY c.id DESC LIMIT ${paging.limit} OFFSET ${(paging.page - 1) * paging.limit}`
    const total = count?.total ?? 0
    return {
      campaigns: rows.map(toView),
      total_count: total,
      page: paging.page,
      limit: paging.limit,
      total_pages: pageCount(total, paging.limit)
    }
  }, Effect.orDie)

  const get = Effect.fn("Campaigns.get")(function*(principal: Principal, id: CampaignId) {
    return toView(yield* findRow(principal.organizationId, id))
  }, Effect.catchTag("SqlError", Effect.die))

  const progress = Effect.fn("Campaigns.progress")(function*(principal: Principal, id: CampaignId) {
    const campaign = yield* findRow(principal.organizationId, id)
    // Contacts count only once the import published them (and counting a loading import's would scan them all).
    const states = campaign.import_status !== "ready" ?
      [] :
      yield* sql<{ state: string; skip_reason: SkipReason | null; count: number; next_attempt_at: Date | null }>`
      SELECT state, skip_reason, count(*)::int AS count,
             min(next_attempt_at) FILTER (WHERE state = 'pending') AS next_attempt_at
      FROM campaign_contacts WHERE campaign_id = ${id} GROUP BY state, skip_reason`
    const [live] = yield* sql<{ count: number }>`
      SELECT count(*)::int AS count FROM campaign_attempts WHERE campaign_id = ${id} AND ended_at IS NULL`
    const countOf = (state: string) =>
      states.filter((row) => row.state === state).reduce((sum, row) => sum + row.count, 0)
    const skippedFor = (reason: SkipReason) =>
      states.find((row) => row.state === "skipped" && row.skip_reason === reason)?.count ?? 0
    return {
      campaign_id: id,
      state: campaign.state,
      total_rows: campaign.total_rows ?? 0,
      processed_rows: campaign.processed_rows,
      failed_rows: campaign.failed_rows,
      executed_count: campaign.executed_count,
      total_queued_count: campaign.total_queued_count,
      pending: countOf("pending"),
      dialing: countOf("dialing"),
      completed: countOf("completed"),
      failed: countOf("failed"),
      cancelled: countOf("cancelled"),
      skipped: countOf("skipped"),
      waiting_for_local_hours: states.find((row) =>
        row.state === "pending" && row.skip_reason === "outside_local_hours"
      )?.count ?? 0,
      waiting_for_frequency_cap: states.find((row) =>
        row.state === "pending" && row.skip_reason === "frequency_cap"
      )?.count ?? 0,
      skipped_reasons: {
        dnc: skippedFor("dnc"),
        outside_local_hours: skippedFor("outside_local_hours"),
        frequency_cap: skippedFor("frequency_cap")
      },
      live_calls: live?.count ?? 0,
      next_attempt_at: states.find((row) => row.state === "pending")?.next_attempt_at ?? null,
      started_at: campaign.started_at,
      completed_at: campaign.completed_at,
      import: importProgress(campaign),
      dispatch: yield* dispatchStatus(id)
    }
  }, Effect.catchTag("SqlError", Effect.die))

  const runs = Effect.fn("Campaigns.runs")(function*(principal: Principal, id: CampaignId, paging: Paging) {
    yield* findRow(principal.organizationId, id)
    const [count] = yield* sql<{ total: number }>`
      SELECT count(*)::int AS total FROM runs WHERE campaign_id = ${id} AND organization_id = ${principal.organizationId}`
    const rows = yield* sql<CampaignRunView>`
      SELECT id, name, state, mode, direction, caller_number, called_number, contact_id, disposition, end_reason,
             duration_seconds, created_at, started_at, ended_at
      FROM runs WHERE campaign_id = ${id} AND organization_id = ${principal.organizationId}
      ORDER BY id DESC LIMIT ${paging.limit} OFFSET ${(paging.page - 1) * paging.limit}`
    const total = count?.total ?? 0
    return {
      runs: rows,
      total_count: total,
      page: paging.page,
      limit: paging.limit,
      total_pages: pageCount(total, paging.limit)
    }
  }, Effect.catchTag("SqlError", Effect.die))

  const report = Effect.fn("Campaigns.report")(function*(principal: Principal, id: CampaignId) {
    const campaign = yield* findRow(principal.organizationId, id)
    return campaignReport(sql, campaign)
  }, Effect.catchTag("SqlError", Effect.die))

  return { list, get, progress, runs, report }
})
