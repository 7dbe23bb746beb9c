import { SqlClient, type SqlError } from "@effect/sql"
import { Effect, Either, Layer, Option, ParseResult, Schema } from "effect"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { PublicUrl } from "../../services/PublicUrl.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import {
  type PhoneNumberInput,
  type PhoneNumberView,
  type TelephonyConfigInput,
  type TelephonyConfigListItem,
  TelephonyConfigs,
  type TelephonyConfigUpdate
} from "../../services/TelephonyConfigs.ts"
import { publicUrlProblem } from "../../src/campaign/voicePreflight.ts"
import { Conflict, type FieldProblem, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { asRegion, toE164 } from "../../src/phone/mod.ts"
import {
  carrySecrets,
  defaultApiBaseUrl,
  mask,
  type Provider,
  ProviderConfig,
  splitSecrets
} from "../../src/telephony/providerConfig.ts"

interface ConfigRow {
  readonly id: number
  readonly name: string
  readonly provider: Provider
  readonly is_default_outbound: boolean
  readonly settings: Record<string, unknown>
  readonly credentials: string
  readonly api_base_url: string | null
  readonly default_region: string | null
  readonly inactive: boolean
  readonly inactive_reason: string | null
  readonly phone_number_count: number
  readonly created_at: Date
  readonly updated_at: Date
}

/** The pg error code of a unique violation, carried as the cause of SqlError. */
const uniqueViolation = (error: SqlError.SqlError, constraint: string) => {
  const cause = error.cause as { code?: string; constraint?: string } | undefined
  return cause?.code === "23505" && cause.constraint === constraint
}

const blockedReason = (row: Pick<ConfigRow, "inactive" | "inactive_reason" | "phone_number_count">) =>
  row.inactive
    ? `The configuration is inactive${row.inactive_reason ? `: ${row.inactive_reason}` : ""}`
    : row.phone_number_count === 0
    ? "The configuration has no active phone number to call from"
    : null

const toListItem = (row: ConfigRow): TelephonyConfigListItem => {
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

const problemsOf = (error: ParseResult.ParseError, at: ReadonlyArray<string>): Array<FieldProblem> =>
  ParseResult.ArrayFormatter.formatErrorSync(error).map((issue) => ({
    loc: [...at, ...issue.path.map((segment) => (typeof segment === "number" ? segment : String(segment)))],
    msg: issue._tag === "Missing"
      ? "Field required"
      : issue._tag === "Unexpected"
      ? "Extra inputs are not permitted"
      : issue.message,
    type: issue._tag === "Missing" ? "missing" : issue._tag === "Unexpected" ? "extra_forbidden" : "value_error"
  }))

// A misspelt or misplaced field is refused by name rather than dropped in silence.
const decodeConfig = Schema.decodeUnknownEither(ProviderConfig, { errors: "all", onExcessProperty: "error" })

const secretProblem = (name: string, message: string): FieldProblem => ({
  loc: ["body", "config", name],
  msg: `${message}: a stored secret is only kept while provider, account and api_base_url stay the same`,
  type: "value_error"
})

const invalidRegion = (value: string) =>
  ValidationFailed.single(["body", "default_region"], `"${value}" is not an ISO 3166 region code such as US or GB`)

export const TelephonyConfigsLive = Layer.effect(
  TelephonyConfigs,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* SecretBox
    const outboundHttp = yield* OutboundHttp
    const publicUrl = yield* PublicUrl

    const selectConfigs = (organizationId: number, id: number | null) =>
      sql<ConfigRow>`
        SELECT t.id, t.name, t.provider, t.is_default_outbound, t.settings, t.credentials, t.api_base_url,
               t.default_region, t.inactive, t.inactive_reason, t.created_at, t.updated_at,
               (SELECT count(*)::int FROM phone_numbers p
                WHERE p.telephony_configuration_id = t.id AND p.is_active) AS phone_number_count
        FROM telephony_configurations t
        WHERE t.organization_id = ${organizationId} ${id === null ? sql`` : sql`AND t.id = ${id}`}
        ORDER BY t.id`

    const storedSecrets = (row: ConfigRow) =>
      secrets.decrypt(row.credentials).pipe(
        Effect.map((text) => JSON.parse(text) as Record<string, string>),
        Effect.orDie
      )

    const toView = (row: ConfigRow) =>
      Effect.map(storedSecrets(row), (stored) => ({
        ...toListItem(row),
        config: {
          provider: row.provider,
          ...row.settings,
          ...Object.fromEntries(Object.entries(stored).map(([name, value]) => [name, mask(value)])),
          api_base_url: row.api_base_url ?? defaultApiBaseUrl[row.provider]
        }
      }))

    const findRow = (organizationId: number, id: number) =>
      Effect.flatMap(
        selectConfigs(organizationId, id),
        (rows) =>
          rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Telephony configuration", id }))
      )

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

    const nameTaken = (name: string) =>
      new Conflict({ message: `A telephony configuration named "${name}" already exists` })

    const clearOtherDefaults = (organizationId: number, keep: number) =>
      sql`UPDATE telephony_configurations SET is_default_outbound = false, updated_at = now()
          WHERE organization_id = ${organizationId} AND id <> ${keep} AND is_default_outbound`

    const list = Effect.fn("TelephonyConfigs.list")(function*(principal: Principal) {
      return (yield* selectConfigs(principal.organizationId, null)).map(toListItem)
    }, Effect.orDie)

    const get = Effect.fn("TelephonyConfigs.get")(function*(principal: Principal, id: number) {
      return yield* toView(yield* findRow(principal.organizationId, id))
    }, Effect.catchTag("SqlError", Effect.die))

    const create = Effect.fn("TelephonyConfigs.create")(function*(principal: Principal, input: TelephonyConfigInput) {
      const region = yield* regionOf(input.default_region)
      yield* checkApiBaseUrl(input.config.api_base_url)
      yield* checkReachable(input.config.provider, input.config.api_base_url)
      const { settings, secrets: secretValues } = splitSecrets(input.config)
      const id = yield* sql.withTransaction(Effect.gen(function*() {
        // Cleared first: the database allows one default per organization at every moment.
        if (input.is_default_outbound) yield* clearOtherDefaults(principal.organizationId, 0)
        const [row] = yield* sql<{ id: number }>`
          INSERT INTO telephony_configurations
            (organization_id, name, provider, is_default_outbound, settings, credentials, api_base_url, default_region)
          VALUES (${principal.organizationId}, ${input.name}, ${input.config.provider}, ${
          input.is_default_outbound ?? false
        },
                  ${JSON.stringify(settings)}::jsonb, ${secrets.encrypt(JSON.stringify(secretValues))},
                  ${input.config.api_base_url ?? null}, ${region ?? null})
          RETURNING id`
        return row!.id
      }))
      return yield* toView(yield* findRow(principal.organizationId, id).pipe(Effect.orDie))
    }, (effect, _principal, input) =>
      effect.pipe(
        Effect.catchTag("SqlError", (error) =>
          uniqueViolation(error, "telephony_configurations_name")
            ? Effect.fail(nameTaken(input.name))
            : Effect.die(error))
      ))

    const update = Effect.fn("TelephonyConfigs.update")(
      function*(principal: Principal, id: number, input: TelephonyConfigUpdate) {
        const current = yield* findRow(principal.organizationId, id)
        const region = input.default_region === undefined
          ? current.default_region
          : yield* regionOf(input.default_region)
        let settings = current.settings
        let credentials = current.credentials
        let provider = current.provider
        let apiBaseUrl = current.api_base_url
        if (input.config !== undefined) {
          const given = { provider: current.provider, ...input.config }
          const stored = {
            config: { provider: current.provider, ...current.settings, api_base_url: current.api_base_url },
            secrets: yield* storedSecrets(current)
          }
          const { merged, withheld, maskedOnly } = carrySecrets(stored, given)
          const decoded = decodeConfig(merged)
          const problems = [
            ...maskedOnly.map((name) => secretProblem(name, "This is a masked value; send the real secret")),
            ...(Either.isLeft(decoded) ? problemsOf(decoded.left, ["body", "config"]) : [])
              .filter((problem) => !maskedOnly.includes(String(problem.loc[2])))
              .map((problem) =>
                problem.type === "missing" && withheld.includes(String(problem.loc[2]))
                  ? secretProblem(String(problem.loc[2]), `Send ${problem.loc[2]} again`)
                  : problem
              )
          ]
          if (problems.length > 0 || Either.isLeft(decoded)) {
            return yield* new ValidationFailed({ message: "Invalid telephony configuration", problems })
          }
          yield* checkApiBaseUrl(decoded.right.api_base_url)
          yield* checkReachable(decoded.right.provider, decoded.right.api_base_url)
          const split = splitSecrets(decoded.right)
          settings = split.settings
          credentials = secrets.encrypt(JSON.stringify(split.secrets))
          provider = decoded.right.provider
          apiBaseUrl = decoded.right.api_base_url ?? null
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
        return yield* toView(yield* findRow(principal.organizationId, id))
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const remove = Effect.fn("TelephonyConfigs.remove")(function*(principal: Principal, id: number) {
      const deleted = yield* sql<{ id: number }>`
        DELETE FROM telephony_configurations t
        WHERE t.id = ${id} AND t.organization_id = ${principal.organizationId}
          AND NOT EXISTS (SELECT 1 FROM campaigns c
                          WHERE c.telephony_configuration_id = t.id AND c.state IN ('running', 'paused'))
        RETURNING t.id`
      if (deleted.length > 0) return
      yield* findRow(principal.organizationId, id)
      const users = yield* sql<{ id: number; name: string; state: string }>`
        SELECT id, name, state FROM campaigns
        WHERE telephony_configuration_id = ${id} AND state IN ('running', 'paused') ORDER BY id LIMIT 5`
      return yield* new Conflict({
        message: `Telephony configuration ${id} is used by ${
          users.map((c) => `${c.state} campaign ${c.id} ("${c.name}")`).join(", ")
        }; pause and cancel those campaigns, or wait for them to finish, before deleting it`
      })
    }, Effect.catchTag("SqlError", Effect.die))

    const numberColumns =
      sql`id, telephony_configuration_id, address, label, is_active, is_default_caller_id, inbound_workflow_id, created_at, updated_at`

    const findNumber = (configId: number, numberId: number) =>
      Effect.flatMap(
        sql<
          PhoneNumberView
        >`SELECT ${numberColumns} FROM phone_numbers WHERE id = ${numberId} AND telephony_configuration_id = ${configId}`,
        (
          rows
        ) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Phone number", id: numberId })))
      )

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

    const writeNumber = (
      principal: Principal,
      configId: number,
      numberId: number | null,
      input: PhoneNumberInput
    ) =>
      Effect.gen(function*() {
        const config = yield* findRow(principal.organizationId, configId)
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
        return yield* findNumber(configId, id)
      }).pipe(
        Effect.catchTag("SqlError", (error) =>
          uniqueViolation(error, "phone_numbers_address")
            ? Effect.fail(numberTaken(input.address ?? ""))
            : Effect.die(error))
      )

    const listNumbers = Effect.fn("TelephonyConfigs.listNumbers")(function*(principal: Principal, configId: number) {
      yield* findRow(principal.organizationId, configId)
      return yield* sql<PhoneNumberView>`
        SELECT ${numberColumns} FROM phone_numbers WHERE telephony_configuration_id = ${configId} ORDER BY id`
    }, Effect.catchTag("SqlError", Effect.die))

    const addNumber = Effect.fn("TelephonyConfigs.addNumber")(
      (principal: Principal, configId: number, input: PhoneNumberInput & { readonly address: string }) =>
        writeNumber(principal, configId, null, input)
    )

    const updateNumber = Effect.fn("TelephonyConfigs.updateNumber")(
      (principal: Principal, configId: number, numberId: number, input: PhoneNumberInput) =>
        writeNumber(principal, configId, numberId, input)
    )

    const removeNumber = Effect.fn("TelephonyConfigs.removeNumber")(
      function*(principal: Principal, configId: number, numberId: number) {
        yield* findRow(principal.organizationId, configId)
        const deleted =
          yield* sql`DELETE FROM phone_numbers WHERE id = ${numberId} AND telephony_configuration_id = ${configId} RETURNING id`
        if (deleted.length === 0) return yield* new NotFound({ resource: "Phone number", id: numberId })
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const noTelephony = (message: string) =>
      ValidationFailed.single(["body", "telephony_configuration_id"], message, "telephony_unavailable")

    const outbound = Effect.fn("TelephonyConfigs.outbound")(
      function*(organizationId: number, preferredId: number | null) {
        const rows = preferredId === null
          ? (yield* selectConfigs(organizationId, null)).filter((row) => row.is_default_outbound)
          : yield* selectConfigs(organizationId, preferredId)
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
        const stored = yield* storedSecrets(row)
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
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    return TelephonyConfigs.of({
      list,
      get,
      create,
      update,
      remove,
      listNumbers,
      addNumber,
      updateNumber,
      removeNumber,
      outbound
    })
  })
)
