import type { SqlClient } from "@effect/sql"
import { Effect, Schema } from "effect"
import type { SecretBoxShape } from "../../services/SecretBox.ts"
import type { OutboundTelephony } from "../../services/TelephonyConfigs.ts"
import { ValidationFailed } from "../../src/domain/errors.ts"
import type { OrganizationId, TelephonyConfigId } from "../../src/domain/ids.ts"
import { defaultApiBaseUrl, ProviderConfig } from "../../src/telephony/providerConfig.ts"
import { dieOnSqlError } from "../db/sqlDefects.ts"
import { blockedReason, selectConfigs, storedSecrets } from "./configRows.ts"

const noTelephony = (message: string) =>
  ValidationFailed.single(["body", "telephony_configuration_id"], message, "telephony_unavailable")

/**
 * The configuration a campaign dials through, with its credentials decrypted: the one named, else
 * the organization's default outbound one. Read by `TelephonyConfigs.outbound` and by
 * `CarrierAccounts`, which keeps what it reads (and so cannot ask `TelephonyConfigs`, which tells
 * it when to forget).
 */
export const readOutbound = (sql: SqlClient.SqlClient, secrets: SecretBoxShape) =>
(
  organizationId: OrganizationId,
  preferredId: TelephonyConfigId | null
): Effect.Effect<OutboundTelephony, ValidationFailed> =>
  Effect.gen(function*() {
    const rows = preferredId === null
      ? (yield* selectConfigs(sql, organizationId, null)).filter((row) => row.is_default_outbound)
      : yield* selectConfigs(sql, organizationId, preferredId)
    const row = rows[0]
    if (!row) {
      return yield* noTelephony(
        preferredId === null
          ? "No usable telephony configuration: the organization has no default outbound telephony configuration. Create one at /api/v1/organizations/telephony-configs or set telephony_configuration_id on the campaign"
          : `No usable telephony configuration: telephony configuration ${preferredId} does not exist`
      )
    }
    const blocked = blockedReason(row)
    if (blocked) {
      return yield* noTelephony(`No usable telephony configuration: "${row.name}" cannot place calls. ${blocked}`)
    }
    const stored = yield* storedSecrets(secrets, row)
    const config = yield* Schema.decodeUnknown(ProviderConfig)({
      provider: row.provider,
      ...row.settings,
      ...stored,
      api_base_url: row.api_base_url
    }).pipe(Effect.orDie)
    const callerIds = yield* sql<{ address: string }>`
      SELECT address FROM phone_numbers WHERE telephony_configuration_id = ${row.id} AND is_active
      ORDER BY is_default_caller_id DESC, id`
    return {
      id: row.id,
      name: row.name,
      default_region: row.default_region,
      api_base_url: row.api_base_url ?? defaultApiBaseUrl[row.provider],
      config,
      caller_ids: callerIds.map((number) => number.address)
    }
  }).pipe(dieOnSqlError)
