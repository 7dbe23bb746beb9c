import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { NotFound } from "../../src/domain/errors.ts"
import type { CampaignId, OrganizationId, TelephonyConfigId, WorkflowId } from "../../src/domain/ids.ts"
import { type CampaignRow, selectCampaigns } from "./campaignRows.ts"

interface WorkflowRow {
  readonly id: WorkflowId
  readonly name: string
  readonly status: string
  readonly workflow_definition: unknown
}

/** The organization-scoped lookups every campaign operation starts from: another organization's row is NotFound. */
export const makeCampaignLookups = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const findRow = (organizationId: OrganizationId, id: CampaignId) =>
    Effect.flatMap(
      sql<CampaignRow>`${selectCampaigns(sql)} WHERE c.id = ${id} AND c.organization_id = ${organizationId}`,
      (rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Campaign", id })))
    )

  /** The workflow with the definition its calls would run: the published one, else the latest draft. */
  const findWorkflow = (organizationId: OrganizationId, id: WorkflowId) =>
    Effect.flatMap(
      sql<WorkflowRow>`
        SELECT w.id, w.name, w.status, d.workflow_definition
        FROM workflows w
        LEFT JOIN LATERAL (
          SELECT workflow_definition FROM workflow_definitions
          WHERE workflow_id = w.id AND version_status IN ('published', 'draft')
          ORDER BY (version_status = 'published') DESC, version_number DESC LIMIT 1
        ) d ON true
        WHERE w.id = ${id} AND w.organization_id = ${organizationId}`,
      (rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Workflow", id })))
    )

  const telephonyExists = (organizationId: OrganizationId, id: TelephonyConfigId | null | undefined) =>
    id === null || id === undefined
      ? Effect.void
      : Effect.flatMap(
        sql`SELECT 1 FROM telephony_configurations WHERE id = ${id} AND organization_id = ${organizationId}`,
        (
          rows
        ) => (rows.length > 0 ? Effect.void : Effect.fail(new NotFound({ resource: "Telephony configuration", id })))
      )

  return { findRow, findWorkflow, telephonyExists }
})
