import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { CallerIdPool } from "../../src/campaigns/callerIdPool.ts"
import { NotFound, ValidationFailed } from "../../src/domain/errors.ts"
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

  /**
   * A pool names numbers of the configuration the campaign dials through (the one it names, else
   * the organization's default outbound one): another configuration's or organization's number is refused.
   */
  const poolNumbersExist = (
    organizationId: OrganizationId,
    configurationId: TelephonyConfigId | null,
    pool: CallerIdPool | null
  ) =>
    Effect.gen(function*() {
      const ids = pool?.phone_number_ids ?? []
      if (ids.length === 0) return
      const found = yield* sql<{ id: number }>`
        SELECT n.id FROM phone_numbers n JOIN telephony_configurations t ON t.id = n.telephony_configuration_id
        WHERE n.organization_id = ${organizationId} AND n.id IN ${sql.in(ids)}
          AND ${configurationId === null ? sql`t.is_default_outbound` : sql`t.id = ${configurationId}`}`
      const known = new Set(found.map((row) => row.id))
      const problems = ids.flatMap((id, index) =>
        known.has(id) ? [] : [{
          loc: ["body", "caller_id_pool", "phone_number_ids", index],
          msg: `Phone number ${id} is not a number of the campaign's telephony configuration`,
          type: "value_error"
        }]
      )
      if (problems.length > 0) {
        return yield* new ValidationFailed({ message: "Invalid caller_id_pool", problems })
      }
    })

  return { findRow, findWorkflow, telephonyExists, poolNumbersExist }
})
