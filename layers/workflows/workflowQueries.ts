import { SqlClient, type Statement } from "@effect/sql"
import { Effect } from "effect"
import type { JsonObject, WorkflowView } from "../../services/Workflows.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"

/**
 * A workflow's row joined with its working version: the view's fields, with the disposition codes
 * and the definition as stored (either may be missing) and the version's id under its column name.
 */
type WorkflowRow = Omit<WorkflowView, "call_disposition_codes" | "current_definition_id" | "workflow_definition"> & {
  readonly call_disposition_codes: { readonly disposition_codes?: ReadonlyArray<string> } | null
  readonly definition_id: number | null
  readonly workflow_definition: JsonObject | null
}

export const toView = (row: WorkflowRow): WorkflowView => ({
  id: row.id,
  name: row.name,
  status: row.status,
  created_at: row.created_at,
  updated_at: row.updated_at,
  workflow_uuid: row.workflow_uuid,
  call_disposition_codes: { disposition_codes: row.call_disposition_codes?.disposition_codes ?? [] },
  current_definition_id: row.definition_id,
  version_number: row.version_number,
  version_status: row.version_status,
  workflow_definition: row.workflow_definition ?? { nodes: [], edges: [] },
  template_context_variables: row.template_context_variables,
  workflow_configurations: row.workflow_configurations,
  total_runs: row.total_runs
})

/**
 * Workflows of one organization with their working version (the draft when there is one, else the
 * published version) and their run count, filtered by `where` and paged.
 */
export const selectWorkflows = (
  organizationId: OrganizationId,
  where: (sql: SqlClient.SqlClient) => Statement.Fragment | Statement.Statement<unknown>,
  page: { readonly limit: number; readonly offset: number } = { limit: 1_000_000, offset: 0 }
) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<WorkflowRow>`
      SELECT w.id, w.name, w.status, w.created_at, w.updated_at, w.workflow_uuid::text AS workflow_uuid,
             w.call_disposition_codes,
             d.id AS definition_id, d.version_number, d.version_status, d.workflow_definition,
             d.template_context_variables, d.workflow_configurations,
             (SELECT count(*) FROM runs r WHERE r.workflow_id = w.id) AS total_runs
      FROM workflows w
      LEFT JOIN LATERAL (
        SELECT * FROM workflow_definitions v
        WHERE v.workflow_id = w.id AND v.version_status IN ('draft', 'published')
        ORDER BY v.version_status = 'draft' DESC
        LIMIT 1
      ) d ON true
      WHERE w.organization_id = ${organizationId} AND ${where(sql)}
      ORDER BY w.id DESC
      LIMIT ${page.limit} OFFSET ${page.offset}`)
