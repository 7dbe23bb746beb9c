import { SqlClient } from "@effect/sql"
import { Cache, Duration, Effect, Either, Layer, Option } from "effect"
import { type CredentialInput, Credentials, type CredentialUpdate } from "../../services/Credentials.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import { OrganizationId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { maskedCredentialData } from "../../src/tools/credentialHeaders.ts"
import type { Credential, CredentialData, CredentialType } from "../../src/tools/credentialRecord.ts"
import { dieOnSqlError } from "../db/sqlDefects.ts"
import { uniqueViolation } from "../db/sqlDefects.ts"
import { decodeCredentialData, mergedCredentialData, splitCredentialData } from "./credentialUpdate.ts"

interface CredentialRow {
  readonly id: number
  readonly credential_uuid: string
  readonly name: string
  readonly description: string | null
  readonly credential_type: CredentialType
  readonly public_data: Record<string, string>
  readonly secrets: string
  readonly bound_host: string | null
  readonly created_at: Date
  readonly updated_at: Date | null
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A host as a credential is bound to it: `name` or `name:port`, lower-case; null when it is not one. */
export const normalHost = (host: string): string | null => {
  try {
    const parsed = new URL(`https://${host.trim()}`)
    const normal = parsed.host.toLowerCase()
    return normal === host.trim().toLowerCase() && parsed.pathname === "/" ? normal : null
  } catch {
    return null
  }
}

/**
 * How long a credential read for a tool call is kept: a conversation's calls do not each read and
 * decrypt it. A change in this process forgets it at once; another process sees it within this.
 */
const KEPT_FOR = Duration.seconds(10)

const nameTaken = (name: string) => new Conflict({ message: `A credential named "${name}" already exists` })

const badHost = (host: string) =>
  ValidationFailed.single(["body", "host"], `"${host}" is not a host name (api.example.com or api.example.com:8443)`)

export const CredentialsLive = Layer.effect(
  Credentials,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secretBox = yield* SecretBox

    const dataOf = (row: CredentialRow) =>
      secretBox.decrypt(row.secrets).pipe(
        Effect.map((text): CredentialData => ({ ...row.public_data, ...(JSON.parse(text) as Record<string, string>) })),
        Effect.orDie
      )

    const toView = (row: CredentialRow) =>
      Effect.map(dataOf(row), (data): Credential => ({
        uuid: row.credential_uuid,
        name: row.name,
        description: row.description,
        credential_type: row.credential_type,
        credential_data: maskedCredentialData(row.credential_type, data),
        bound_host: row.bound_host,
        created_at: row.created_at,
        updated_at: row.updated_at
      }))

    const rows = (organizationId: OrganizationId, uuid: string | null) =>
      sql<CredentialRow>`
        SELECT id, credential_uuid::text AS credential_uuid, name, description, credential_type, public_data, secrets,
               bound_host, created_at, updated_at
        FROM credentials
        WHERE organization_id = ${organizationId} ${uuid === null ? sql`` : sql`AND credential_uuid = ${uuid}::uuid`}
        ORDER BY id`.pipe(Effect.orDie)

    const findRow = (organizationId: OrganizationId, uuid: string) =>
      UUID.test(uuid)
        ? Effect.flatMap(rows(organizationId, uuid), (found) =>
          found[0] ? Effect.succeed(found[0]) : Effect.fail(new NotFound({ resource: "Credential", id: uuid })))
        : Effect.fail(new NotFound({ resource: "Credential", id: uuid }))

    const hostOf = (host: string | null | undefined) =>
      host === undefined || host === null || host.trim() === ""
        ? Effect.succeed(null)
        : Effect.fromNullable(normalHost(host)).pipe(Effect.mapError(() => badHost(host)))

    const invalid = (problems: ReadonlyArray<{ loc: ReadonlyArray<string | number>; msg: string; type: string }>) =>
      new ValidationFailed({ message: "Invalid credential_data", problems })

    const list = Effect.fn("Credentials.list")(function*(principal: Principal) {
      return yield* Effect.forEach(yield* rows(principal.organizationId, null), toView)
    })

    const get = Effect.fn("Credentials.get")(function*(principal: Principal, uuid: string) {
      return yield* toView(yield* findRow(principal.organizationId, uuid))
    })

    const write = (
      principal: Principal,
      fields: {
        readonly uuid: string | null
        readonly name: string
        readonly description: string | null
        readonly type: CredentialType
        readonly data: CredentialData
        readonly host: string | null
      }
    ) => {
      const { secrets, shown } = splitCredentialData(fields.type, fields.data)
      const sealed = secretBox.encrypt(JSON.stringify(secrets))
      const statement = fields.uuid === null
        ? sql<{ credential_uuid: string }>`
          INSERT INTO credentials
            (credential_uuid, organization_id, created_by, name, description, credential_type, public_data, secrets, bound_host)
          VALUES (${crypto.randomUUID()}, ${principal.organizationId}, ${principal.userId}, ${fields.name},
                  ${fields.description}, ${fields.type}, ${JSON.stringify(shown)}::jsonb, ${sealed}, ${fields.host})
          RETURNING credential_uuid::text AS credential_uuid`
        : sql<{ credential_uuid: string }>`
          UPDATE credentials
          SET name = ${fields.name}, description = ${fields.description}, credential_type = ${fields.type},
              public_data = ${JSON.stringify(shown)}::jsonb, secrets = ${sealed}, bound_host = ${fields.host},
              updated_at = now()
          WHERE organization_id = ${principal.organizationId} AND credential_uuid = ${fields.uuid}::uuid
          RETURNING credential_uuid::text AS credential_uuid`
      return statement.pipe(
        Effect.catchTag(
          "SqlError",
          (error) =>
            uniqueViolation(error, "credentials_name") ? Effect.fail(nameTaken(fields.name)) : Effect.die(error)
        ),
        Effect.flatMap((written) => findRow(principal.organizationId, written[0]!.credential_uuid).pipe(Effect.orDie)),
        Effect.flatMap(toView)
      )
    }

    const create = Effect.fn("Credentials.create")(function*(principal: Principal, input: CredentialInput) {
      const host = yield* hostOf(input.host)
      const data = decodeCredentialData(input.credential_type, input.credential_data)
      if (Either.isLeft(data)) return yield* invalid(data.left)
      return yield* write(principal, {
        uuid: null,
        name: input.name,
        description: input.description ?? null,
        type: input.credential_type,
        data: data.right,
        host
      })
    })

    const update = Effect.fn("Credentials.update")(
      function*(principal: Principal, uuid: string, input: CredentialUpdate) {
        const current = yield* findRow(principal.organizationId, uuid)
        const stored = { type: current.credential_type, data: yield* dataOf(current) }
        const type = input.credential_type ?? current.credential_type
        let data = stored.data
        let replaced = false
        if (input.credential_data !== undefined || type !== current.credential_type) {
          const merged = mergedCredentialData(stored, type, input.credential_data ?? {})
          if (Either.isLeft(merged)) return yield* invalid(merged.left)
          data = merged.right.data
          replaced = merged.right.replaced
        }
        const givenHost = input.host === undefined ? undefined : yield* hostOf(input.host)
        // The stored secret stays where it was bound: only a secret sent again may go to another host.
        if (!replaced && givenHost !== undefined && current.bound_host !== null && givenHost !== current.bound_host) {
          return yield* ValidationFailed.single(
            ["body", "host"],
            `This credential is bound to ${current.bound_host}; a stored credential never follows a changed host. Send its secret again in credential_data with the new host`
          )
        }
        const host = givenHost !== undefined ? givenHost : replaced ? null : current.bound_host
        yield* forget(principal.organizationId, uuid)
        return yield* write(principal, {
          uuid,
          name: input.name ?? current.name,
          description: input.description === undefined ? current.description : input.description,
          type,
          data,
          host
        })
      }
    )

    const remove = Effect.fn("Credentials.remove")(function*(principal: Principal, uuid: string) {
      const current = yield* findRow(principal.organizationId, uuid)
      const users = yield* sql<{ name: string }>`
        SELECT name FROM tools WHERE credential_id = ${current.id} ORDER BY id LIMIT 5`.pipe(Effect.orDie)
      if (users.length > 0) {
        return yield* new Conflict({
          message: `Credential ${uuid} is used by the tools ${
            users.map((tool) => `"${tool.name}"`).join(", ")
          }; change or delete them first`
        })
      }
      yield* forget(principal.organizationId, uuid)
      yield* sql`DELETE FROM credentials WHERE id = ${current.id}`.pipe(
        Effect.catchTag("SqlError", (error) =>
          (error.cause as { code?: string } | undefined)?.code === "23503"
            ? Effect.fail(new Conflict({ message: `Credential ${uuid} is used by a tool; change or delete it first` }))
            : Effect.die(error))
      )
    })

    const read = (key: string) =>
      Effect.gen(function*() {
        const [organizationId, uuid] = key.split(" ") as [string, string]
        const [row] = yield* rows(OrganizationId.make(Number(organizationId)), uuid)
        if (!row) return Option.none()
        return Option.some({
          id: row.id,
          uuid: row.credential_uuid,
          type: row.credential_type,
          data: yield* dataOf(row),
          boundHost: row.bound_host
        })
      })
    const kept = yield* Cache.make({ capacity: 10_000, timeToLive: KEPT_FOR, lookup: read })
    const keyOf = (organizationId: OrganizationId, uuid: string) => `${organizationId} ${uuid.toLowerCase()}`
    const forget = (organizationId: OrganizationId, uuid: string) => kept.invalidate(keyOf(organizationId, uuid))

    const forRequest = Effect.fn("Credentials.forRequest")(function*(organizationId: OrganizationId, uuid: string) {
      if (!UUID.test(uuid)) return Option.none()
      return yield* kept.get(keyOf(organizationId, uuid))
    })

    const bind = Effect.fn("Credentials.bind")(function*(organizationId: OrganizationId, id: number, host: string) {
      const bound = yield* sql<{ credential_uuid: string; bound_host: string | null }>`
        UPDATE credentials SET bound_host = ${host}
        WHERE id = ${id} AND organization_id = ${organizationId} AND (bound_host IS NULL OR bound_host = ${host})
        RETURNING credential_uuid::text AS credential_uuid`
      if (bound[0]) yield* forget(organizationId, bound[0].credential_uuid)
      return bound.length > 0
    }, dieOnSqlError)

    return Credentials.of({ list, get, create, update, remove, forRequest, bind })
  })
)
