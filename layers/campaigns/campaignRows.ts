import type { SqlClient } from "@effect/sql"
import type { CampaignView } from "../../services/Campaigns.ts"
import { importProgress, type ImportStatus } from "../../src/campaigns/contactImport.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"

/** A campaign's row: the resource without its import view, with the columns the API does not show. */
export type CampaignRow = Omit<CampaignView, "import"> & {
  readonly organization_id: OrganizationId
  readonly source_columns: ReadonlyArray<string>
  readonly import_status: ImportStatus
  readonly import_contacts: number
  readonly import_bytes_read: number
  readonly import_bytes_total: number | null
  readonly import_errors: ReadonlyArray<string>
}

/** A campaign with its workflow's and telephony configuration's names, in one query. */
export const selectCampaigns = (sql: SqlClient.SqlClient) =>
  sql`
    SELECT c.id, c.organization_id, c.name, c.workflow_id, w.name AS workflow_name, c.state, c.source_type, c.source_id,
           c.source_columns, c.default_region, c.total_rows, c.processed_rows, c.failed_rows, c.executed_count,
           c.total_queued_count, c.retry_config, c.max_concurrency, c.rate_limit_per_second, c.schedule_config, c.calling_hours,
           c.caller_id_pool, c.circuit_breaker, c.voicemail, c.parent_campaign_id, c.redialed_campaign_id, c.telephony_configuration_id,
           t.name AS telephony_configuration_name, c.logs, c.warnings, c.created_at, c.updated_at, c.started_at,
           c.completed_at, c.import_status, c.import_contacts, c.import_bytes_read, c.import_bytes_total, c.import_errors
    FROM campaigns c
    JOIN workflows w ON w.id = c.workflow_id
    LEFT JOIN telephony_configurations t ON t.id = c.telephony_configuration_id`

export const toView = (row: CampaignRow): CampaignView => ({
  id: row.id,
  name: row.name,
  workflow_id: row.workflow_id,
  workflow_name: row.workflow_name,
  state: row.state,
  source_type: row.source_type,
  source_id: row.source_id,
  default_region: row.default_region,
  total_rows: row.total_rows,
  processed_rows: row.processed_rows,
  failed_rows: row.failed_rows,
  created_at: row.created_at,
  updated_at: row.updated_at,
  started_at: row.started_at,
  completed_at: row.completed_at,
  retry_config: row.retry_config,
  max_concurrency: row.max_concurrency,
  rate_limit_per_second: row.rate_limit_per_second,
  schedule_config: row.schedule_config,
  calling_hours: row.calling_hours,
  caller_id_pool: row.caller_id_pool,
  circuit_breaker: row.circuit_breaker,
  voicemail: row.voicemail,
  executed_count: row.executed_count,
  total_queued_count: row.total_queued_count,
  parent_campaign_id: row.parent_campaign_id,
  redialed_campaign_id: row.redialed_campaign_id,
  telephony_configuration_id: row.telephony_configuration_id,
  telephony_configuration_name: row.telephony_configuration_name,
  logs: row.logs,
  warnings: row.warnings,
  import: importProgress(row)
})
