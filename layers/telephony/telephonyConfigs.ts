import { SqlClient } from "@effect/sql"
import { Effect, Either, Layer, Option } from "effect"
import { CarrierAccounts } from "../../services/CarrierAccounts.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import {
  type TelephonyConfigInput,
  TelephonyConfigs,
  type TelephonyConfigUpdate
} from "../../services/TelephonyConfigs.ts"
import { publicUrlProblem } from "../../src/campaigns/voicePreflight.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { OrganizationId, TelephonyConfigId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { asRegion } from "../../src/phone/mod.ts"
import { updatedConfig } from "../../src/telephony/configUpdate.ts"
import { defaultApiBaseUrl, mask, type Provider, splitSecrets } from "../../src/telephony/providerConfig.ts"
import { dieOnSqlError } from "../db/sqlDefects.ts"
import { uniqueViolation } from "../db/sqlDefects.ts"
import { type ConfigRow, selectConfigs, storedSecrets, toListItem } from "./configRows.ts"
import { readOutbound } from "./outboundConfiguration.ts"
import { makePhoneNumbers } from "./phoneNumbers.ts"

const invalidRegion = (value: string) =>
  ValidationFailed.single(["body", "default_region"], `"${value}" is not an ISO 3166 region code such as US or GB`)

const nameTaken = (name: string) =>
  new Conflict({ message: `A telephony configuration named "${name}" already exists` })

/**
 * An organization's carrier accounts. Every change to a configuration or its numbers is told to
 * `CarrierAccounts`, so webhooks are verified with rotated credentials from the moment they are saved.
 */
export const TelephonyConfigsLive = Layer.effect(
  TelephonyConfigs,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* SecretBox
    const outboundHttp = yield* OutboundHttp
    const publicUrl = yield* PublicUrl
    const accounts = yield* CarrierAccounts

    const toView = (row: ConfigRow) =>
      Effect.map(storedSecrets(secrets, row), (stored) => ({
        ...toListItem(row),
        config: {
          provider: row.provider,
          ...row.settings,
          ...Object.fromEntries(Object.entries(stored).map(([name, value]) => [name, mask(value)])),
          api_base_url: row.api_base_url ?? defaultApiBaseUrl[row.provider]
        }
      }))

    const findRow = (organizationId: OrganizationId, id: TelephonyConfigId) =>
      Effect.flatMap(
        selectConfigs(sql, organizationId, id),
        (rows) =>
          rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Telephony configuration", id }))
      ).pipe(dieOnSqlError)

    const regionOf = (value: string | null | undefined) =>
      value === undefined || value === null
        ? Effect.succeed(value)
        : Effect.fromNullable(asRegion(value)).pipe(Effect.mapError(() => invalidRegion(value)))

    /** An api_base_url the outbound policy refuses is refused when saved, not at the first call. */
    const checkApiBaseUrl = (url: string | null | undefined) =>
      url === undefined || url === null
        ? Effect.void
        : Effect.flatMap(
          outboundHttp.refusal("carrier", url),
          Option.match({
            onNone: () => Effect.void,
            onSome: (reason) =>
              Effect.fail(
                ValidationFailed.single(["body", "config", "api_base_url"], `api_base_url refused: ${reason}`)
              )
          })
        )

    /** A carrier that could never call this service back is refused when its configuration is saved. */
    const checkReachable = (provider: Provider, apiBaseUrl: string | null | undefined) => {
      const problem = publicUrlProblem(publicUrl, {
        provider,
        apiBaseUrl: apiBaseUrl ?? defaultApiBaseUrl[provider]
      })
      return problem === null
        ? Effect.void
        : Effect.fail(new Conflict({ message: `This configuration could not take calls: ${problem}` }))
    }

    const clearOtherDefaults = (organizationId: OrganizationId, keep: number) =>
      sql`UPDATE telephony_configurations SET is_default_outbound = false, updated_at = now()
          WHERE organization_id = ${organizationId} AND id <> ${keep} AND is_default_outbound`

    const list = Effect.fn("TelephonyConfigs.list")(function*(principal: Principal) {
      return (yield* selectConfigs(sql, principal.organizationId, null)).map(toListItem)
    }, dieOnSqlError)

    const get = Effect.fn("TelephonyConfigs.get")(function*(principal: Principal, id: TelephonyConfigId) {
      return yield* toView(yield* findRow(principal.organizationId, id))
    })

    const create = Effect.fn("TelephonyConfigs.create")(function*(principal: Principal, input: TelephonyConfigInput) {
      const region = yield* regionOf(input.default_region)
      yield* checkApiBaseUrl(input.config.api_base_url)
      yield* checkReachable(input.config.provider, input.config.api_base_url)
      const { settings, secrets: secretValues } = splitSecrets(input.config)
      const id = yield* sql.withTransaction(Effect.gen(function*() {
        // Cleared first: the database allows one default per organization at every moment.
        if (input.is_default_outbound) yield* clearOtherDefaults(principal.organizationId, 0)
        const [row] = yield* sql<{ id: TelephonyConfigId }>`
          INSERT INTO telephony_configurations
            (organization_id, name, provider, is_default_outbound, settings, credentials, api_base_url, default_region)
          VALUES (${principal.organizationId}, ${input.name}, ${input.config.provider}, ${
          input.is_default_outbound ?? false
        },
                  ${JSON.stringify(settings)}::jsonb, ${secrets.encrypt(JSON.stringify(secretValues))},
                  ${input.config.api_base_url ?? null}, ${region ?? null})
          RETURNING id`
        return row!.id
      })).pipe(
        Effect.catchTag("SqlError", (error) =>
          uniqueViolation(error, "telephony_configurations_name")
            ? Effect.fail(nameTaken(input.name))
            : Effect.die(error))
      )
      return yield* toView(yield* findRow(principal.organizationId, id).pipe(Effect.orDie))
    })

    const update = Effect.fn("TelephonyConfigs.update")(
      function*(principal: Principal, id: TelephonyConfigId, input: TelephonyConfigUpdate) {
        const current = yield* findRow(principal.organizationId, id)
        const region = input.default_region === undefined
          ? current.default_region
          : yield* regionOf(input.default_region)
        let settings = current.settings
        let credentials = current.credentials
        let provider = current.provider
        let apiBaseUrl = current.api_base_url
        if (input.config !== undefined) {
          const config = updatedConfig({
            config: { provider: current.provider, ...current.settings, api_base_url: current.api_base_url },
            secrets: yield* storedSecrets(secrets, current)
          }, { provider: current.provider, ...input.config })
          if (Either.isLeft(config)) {
            return yield* new ValidationFailed({ message: "Invalid telephony configuration", problems: config.left })
          }
          yield* checkApiBaseUrl(config.right.api_base_url)
          yield* checkReachable(config.right.provider, config.right.api_base_url)
          const split = splitSecrets(config.right)
          settings = split.settings
          credentials = secrets.encrypt(JSON.stringify(split.secrets))
          provider = config.right.provider
          apiBaseUrl = config.right.api_base_url ?? null
        }
        const name = input.name ?? current.name
        const isDefault = input.is_default_outbound ?? current.is_default_outbound
        yield* sql.withTransaction(Effect.gen(function*() {
          if (isDefault) yield* clearOtherDefaults(principal.organizationId, id)
          yield* sql`
          UPDATE telephony_configurations
          SET name = ${name}, provider = ${provider}, is_default_outbound = ${isDefault}, settings = ${
            JSON.stringify(settings)
          }::jsonb,
              credentials = ${credentials}, api_base_url = ${apiBaseUrl}, default_region = ${
            region ?? null
          }, updated_at = now()
          WHERE id = ${id} AND organization_id = ${principal.organizationId}`
        })).pipe(
          Effect.catchTag(
            "SqlError",
            (error) =>
              uniqueViolation(error, "telephony_configurations_name") ? Effect.fail(nameTaken(name)) : Effect.die(error)
          )
        )
        // Forgotten once committed: a read from before the rotation is never kept after it.
        yield* accounts.invalidate(principal.organizationId, id)
        return yield* toView(yield* findRow(principal.organizationId, id))
      }
    )

    const remove = Effect.fn("TelephonyConfigs.remove")(function*(principal: Principal, id: TelephonyConfigId) {
      const deleted = yield* sql<{ id: number }>`
        DELETE FROM telephony_configurations t
        WHERE t.id = ${id} AND t.organization_id = ${principal.organizationId}
          AND NOT EXISTS (SELECT 1 FROM campaigns c
                          WHERE c.telephony_configuration_id = t.id AND c.state IN ('running', 'paused'))
        RETURNING t.id`
      if (deleted.length > 0) return yield* accounts.invalidate(principal.organizationId, id)
      yield* findRow(principal.organizationId, id)
      const users = yield* sql<{ id: number; name: string; state: string }>`
        SELECT id, name, state FROM campaigns
        WHERE telephony_configuration_id = ${id} AND state IN ('running', 'paused') ORDER BY id LIMIT 5`
      return yield* new Conflict({
        message: `Telephony configuration ${id} is used by ${
          users.map((c) => `${c.state} campaign ${c.id} ("${c.name}")`).join(", ")
        }; pause and cancel those campaigns, or wait for them to finish, before deleting it`
      })
    }, dieOnSqlError)

    const numbers = makePhoneNumbers(sql, findRow, accounts.invalidate)

    const outbound = Effect.fn("TelephonyConfigs.outbound")(readOutbound(sql, secrets))

    return TelephonyConfigs.of({ list, get, create, update, remove, ...numbers, outbound })
  })
)
