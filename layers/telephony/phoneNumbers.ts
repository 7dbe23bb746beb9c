import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { PhoneNumberInput, PhoneNumberView } from "../../services/TelephonyConfigs.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { OrganizationId, TelephonyConfigId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { asRegion, toE164 } from "../../src/phone/mod.ts"
import { dieOnSqlError, uniqueViolation } from "../db/sqlDefects.ts"
import { type ConfigRow } from "./configRows.ts"

const numberColumns = (sql: SqlClient.SqlClient) =>
  sql`id, telephony_configuration_id, address, label, is_active, is_default_caller_id, inbound_workflow_id, caller_id_refused_at,
      caller_id_refused_reason, created_at, updated_at`

const normalizeAddress = (address: string, region: string | null) => {
  const trimmed = address.trim()
  if (/^sips?:[^\s]+@[^\s]+$/i.test(trimmed)) return Effect.succeed(trimmed)
  const e164 = toE164(trimmed, region ? asRegion(region) : undefined)
  return e164
    ? Effect.succeed(e164)
    : Effect.fail(
      ValidationFailed.single(
        ["body", "address"],
        `"${address}" is not a valid phone number (use E.164 such as +14155550123, or a sip: URI)`
      )
    )
}

const numberTaken = (address: string) =>
  new Conflict({ message: `Phone number ${address} is already registered in this organization` })

/**
 * The phone numbers of a configuration, the `TelephonyConfigs` operations on them. `findConfig`
 * scopes each to the caller's organization; `changed` is told of every write, since the numbers
 * decide whether (and from which number) a configuration can place calls.
 */
export const makePhoneNumbers = (
  sql: SqlClient.SqlClient,
  findConfig: (organizationId: OrganizationId, id: TelephonyConfigId) => Effect.Effect<ConfigRow, NotFound>,
  changed: (organizationId: OrganizationId, configId: TelephonyConfigId) => Effect.Effect<void>
) => {
  const findNumber = (configId: TelephonyConfigId, numberId: number) =>
    Effect.flatMap(
      sql<PhoneNumberView>`
        SELECT ${
        numberColumns(sql)
      } FROM phone_numbers WHERE id = ${numberId} AND telephony_configuration_id = ${configId}`,
      (
        rows
      ) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Phone number", id: numberId })))
    )

  const writeNumber = (
    principal: Principal,
    configId: TelephonyConfigId,
    numberId: number | null,
    input: PhoneNumberInput
  ) =>
    Effect.gen(function*() {
      const config = yield* findConfig(principal.organizationId, configId)
      const address = input.address === undefined
        ? undefined
        : yield* normalizeAddress(input.address, config.default_region)
      if (typeof input.inbound_workflow_id === "number") {
        const [workflow] =
          yield* sql`SELECT 1 FROM workflows WHERE id = ${input.inbound_workflow_id} AND organization_id = ${principal.organizationId}`
        if (!workflow) {
          return yield* ValidationFailed.single(
            ["body", "inbound_workflow_id"],
            `Workflow ${input.inbound_workflow_id} does not exist in this organization`
          )
        }
      }
      const id = yield* sql.withTransaction(Effect.gen(function*() {
        let id = numberId
        if (id === null) {
          const [row] = yield* sql<{ id: number }>`
            INSERT INTO phone_numbers (organization_id, telephony_configuration_id, address, label, is_active, is_default_caller_id,
                                       inbound_workflow_id)
            VALUES (${principal.organizationId}, ${configId}, ${address!}, ${input.label ?? null}, ${
            input.is_active ?? true
          },
                    false, ${input.inbound_workflow_id ?? null})
            RETURNING id`
          id = row!.id
        } else {
          const current = yield* findNumber(configId, id)
          yield* sql`
            UPDATE phone_numbers
            SET address = ${address ?? current.address},
                label = ${input.label === undefined ? current.label : input.label},
                is_active = ${input.is_active ?? current.is_active},
                inbound_workflow_id = ${
            input.inbound_workflow_id === undefined ? current.inbound_workflow_id : input.inbound_workflow_id
          },
                -- Whoever edits the number has seen to it: it may be tried as a caller ID again.
                caller_id_refused_at = NULL, caller_id_refused_reason = NULL,
                updated_at = now()
            WHERE id = ${id}`
        }
        if (input.is_default_caller_id !== undefined) {
          if (input.is_default_caller_id) {
            yield* sql`UPDATE phone_numbers SET is_default_caller_id = false
                       WHERE telephony_configuration_id = ${configId} AND id <> ${id} AND is_default_caller_id`
          }
          yield* sql`UPDATE phone_numbers SET is_default_caller_id = ${input.is_default_caller_id} WHERE id = ${id}`
        }
        return id
      }))
      yield* changed(principal.organizationId, configId)
      return yield* findNumber(configId, id)
    }).pipe(
      Effect.catchTag("SqlError", (error) =>
        uniqueViolation(error, "phone_numbers_address")
          ? Effect.fail(numberTaken(input.address ?? ""))
          : Effect.die(error))
    )

  const listNumbers = Effect.fn("TelephonyConfigs.listNumbers")(
    function*(principal: Principal, configId: TelephonyConfigId) {
      yield* findConfig(principal.organizationId, configId)
      return yield* sql<PhoneNumberView>`
      SELECT ${numberColumns(sql)} FROM phone_numbers WHERE telephony_configuration_id = ${configId} ORDER BY id`
    },
    dieOnSqlError
  )

  const addNumber = Effect.fn("TelephonyConfigs.addNumber")(
    (principal: Principal, configId: TelephonyConfigId, input: PhoneNumberInput & { readonly address: string }) =>
      writeNumber(principal, configId, null, input)
  )

  const updateNumber = Effect.fn("TelephonyConfigs.updateNumber")(
    (principal: Principal, configId: TelephonyConfigId, numberId: number, input: PhoneNumberInput) =>
      writeNumber(principal, configId, numberId, input)
  )

  const removeNumber = Effect.fn("TelephonyConfigs.removeNumber")(
    function*(principal: Principal, configId: TelephonyConfigId, numberId: number) {
      yield* findConfig(principal.organizationId, configId)
      const deleted =
        yield* sql`DELETE FROM phone_numbers WHERE id = ${numberId} AND telephony_configuration_id = ${configId} RETURNING id`
      if (deleted.length === 0) return yield* new NotFound({ resource: "Phone number", id: numberId })
      yield* changed(principal.organizationId, configId)
    },
    dieOnSqlError
  )

  return { listNumbers, addNumber, updateNumber, removeNumber }
}
