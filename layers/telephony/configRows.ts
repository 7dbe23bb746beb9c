import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SecretBoxShape } from "../../services/SecretBox.ts"
import type { TelephonyConfigListItem } from "../../services/TelephonyConfigs.ts"
import type { OrganizationId, TelephonyConfigId } from "../../src/domain/ids.ts"

/**
 * A telephony configuration as stored, with its count of active phone numbers: the list item
 * without what is computed from it, with the columns the API does not show.
 */
export type ConfigRow = Omit<TelephonyConfigListItem, "is_ready_for_outbound" | "outbound_blocked_reason"> & {
  readonly settings: Record<string, unknown>
  readonly credentials: string
  readonly api_base_url: string | null
}

/** An organization's configurations, or the one with `id`. */
export const selectConfigs = (
  sql: SqlClient.SqlClient,
  organizationId: OrganizationId,
  id: TelephonyConfigId | null
) =>
  sql<ConfigRow>`
    SELECT t.id, t.name, t.provider, t.is_default_outbound, t.settings, t.credentials, t.api_base_url,
           t.default_region, t.inactive, t.inactive_reason, t.created_at, t.updated_at,
           (SELECT count(*)::int FROM phone_numbers p
            WHERE p.telephony_configuration_id = t.id AND p.is_active) AS phone_number_count
    FROM telephony_configurations t
    WHERE t.organization_id = ${organizationId} ${id === null ? sql`` : sql`AND t.id = ${id}`}
    ORDER BY t.id`

/** The stored secrets, decrypted; a row the secret key cannot open is a defect (the key was changed). */
export const storedSecrets = (secrets: SecretBoxShape, row: ConfigRow) =>
  secrets.decrypt(row.credentials).pipe(
    Effect.map((text) => JSON.parse(text) as Record<string, string>),
    Effect.orDie
  )

/** Why a configuration cannot place calls, if it cannot. */
export const blockedReason = (row: Pick<ConfigRow, "inactive" | "inactive_reason" | "phone_number_count">) =>
  row.inactive
    ? `The configuration is inactive${row.inactive_reason ? `: ${row.inactive_reason}` : ""}`
    : row.phone_number_count === 0
    ? "The configuration has no active phone number to call from"
    : null

export const toListItem = (row: ConfigRow): TelephonyConfigListItem => {
  const blocked = blockedReason(row)
  return {
    id: row.id,
    name: row.name,
    provider: row.provider,
    is_default_outbound: row.is_default_outbound,
    default_region: row.default_region,
    inactive: row.inactive,
    inactive_reason: row.inactive_reason,
    phone_number_count: row.phone_number_count,
    is_ready_for_outbound: blocked === null,
    outbound_blocked_reason: blocked,
    created_at: row.created_at,
    updated_at: row.updated_at
  }
}
