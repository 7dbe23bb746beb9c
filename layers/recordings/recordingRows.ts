import type { SqlClient } from "@effect/sql"
import type { RecordingView } from "../../services/Recordings.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"

/** A clip's row: the view with the keys of its converted forms. */
export interface RecordingRow extends RecordingView {
  readonly ulaw_8k_key: string
  readonly pcm_16k_key: string
}

export const selectRecordings = (sql: SqlClient.SqlClient) =>
  sql`
  SELECT id, recording_id, organization_id, workflow_id, label, transcript, storage_key, storage_backend,
         ulaw_8k_key, pcm_16k_key, source_format, source_sample_rate, source_channels, duration_ms, size_bytes,
         created_by, created_at, updated_at
  FROM workflow_recordings`

/** The public fields; where the converted forms are kept stays internal. */
export const toView = ({ pcm_16k_key: _pcm, ulaw_8k_key: _ulaw, ...row }: RecordingRow): RecordingView => ({
  ...row,
  size_bytes: Number(row.size_bytes)
})

/** A clip named by its public recording_id, or else by its numeric id. */
export const byReference = (sql: SqlClient.SqlClient, organizationId: OrganizationId, ref: string) =>
  sql<RecordingRow>`
    ${selectRecordings(sql)}
    WHERE organization_id = ${organizationId}
      AND (recording_id = ${ref} ${/^\d{1,15}$/.test(ref) ? sql`OR id = ${Number(ref)}` : sql``})
    ORDER BY (recording_id = ${ref}) DESC
    LIMIT 1`
