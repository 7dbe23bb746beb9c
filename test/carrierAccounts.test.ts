import { SqlClient } from "@effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, TestClock } from "effect"
import { CarrierAccounts } from "../services/CarrierAccounts.ts"
import { SecretBox } from "../services/SecretBox.ts"
import { TelephonyConfigs } from "../services/TelephonyConfigs.ts"
import { OrganizationId, TelephonyConfigId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import { type IsolatedDatabase, isolatedDatabase, newOrganization } from "./support/dialerHarness.ts"

let database: IsolatedDatabase
beforeAll(async () => {
  database = await isolatedDatabase()
})
afterAll(() => database?.close())

const ownerOf = (organizationId: number): Principal => ({
  userId: 0,
  organizationId: OrganizationId.make(organizationId),
  role: "owner",
  via: "session",
  sessionId: null,
  apiKeyId: null,
  scopes: []
})

const authTokenOf = (organizationId: number, configurationId: number) =>
  Effect.flatMap(CarrierAccounts, (accounts) => accounts.forConfiguration(organizationId, configurationId)).pipe(
    Effect.map(Option.map((account) => account.credentials["auth_token"]))
  )

/** Changes the stored token behind the services' backs, as another process would. */
const rotateElsewhere = (configurationId: number, token: string) =>
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* SecretBox
    yield* sql`
      UPDATE telephony_configurations SET credentials = ${secrets.encrypt(JSON.stringify({ auth_token: token }))}
      WHERE id = ${configurationId}`
  })

const withDatabase = <A, E>(effect: Effect.Effect<A, E, any>) =>
  effect.pipe(Effect.provide(Layer.succeedContext(database.context))) as Effect.Effect<A, E>

describe("carrier accounts", () => {
  it.effect("are kept for 30 seconds, then read again", () =>
    withDatabase(Effect.gen(function*() {
      const { organizationId, telephonyConfigurationId } = yield* newOrganization
      const id = TelephonyConfigId.make(telephonyConfigurationId)
      expect(yield* authTokenOf(organizationId, id)).toEqual(Option.some("token"))
      yield* rotateElsewhere(id, "rotated elsewhere")
      yield* TestClock.adjust("29 seconds")
      expect(yield* authTokenOf(organizationId, id)).toEqual(Option.some("token"))
      yield* TestClock.adjust("2 seconds")
      expect(yield* authTokenOf(organizationId, id)).toEqual(Option.some("rotated elsewhere"))
    })))

  it.effect("see a credential rotated through the telephony configuration at once", () =>
    withDatabase(Effect.gen(function*() {
      const { organizationId, telephonyConfigurationId } = yield* newOrganization
      const id = TelephonyConfigId.make(telephonyConfigurationId)
      expect(yield* authTokenOf(organizationId, id)).toEqual(Option.some("token"))
      const configs = yield* TelephonyConfigs
      yield* configs.update(ownerOf(organizationId), id, { config: { account_sid: "AC1", auth_token: "rotated" } })
      expect(yield* authTokenOf(organizationId, id)).toEqual(Option.some("rotated"))
    })))

  it.effect("forget a deleted configuration at once, and do not keep a configuration that cannot call", () =>
    withDatabase(Effect.gen(function*() {
      const { organizationId, telephonyConfigurationId } = yield* newOrganization
      const id = TelephonyConfigId.make(telephonyConfigurationId)
      const sql = yield* SqlClient.SqlClient
      expect(Option.isSome(yield* authTokenOf(organizationId, id))).toBe(true)
      yield* (yield* TelephonyConfigs).remove(ownerOf(organizationId), id)
      expect(yield* authTokenOf(organizationId, id)).toEqual(Option.none())

      const other = yield* newOrganization
      yield* sql`UPDATE phone_numbers SET is_active = false WHERE telephony_configuration_id = ${other.telephonyConfigurationId}`
      expect(yield* authTokenOf(other.organizationId, other.telephonyConfigurationId)).toEqual(Option.none())
      yield* sql`UPDATE phone_numbers SET is_active = true WHERE telephony_configuration_id = ${other.telephonyConfigurationId}`
      expect(Option.isSome(yield* authTokenOf(other.organizationId, other.telephonyConfigurationId))).toBe(true)
    })))

  it.effect("are not another organization's to read", () =>
    withDatabase(Effect.gen(function*() {
      const mine = yield* newOrganization
      const theirs = yield* newOrganization
      expect(yield* authTokenOf(theirs.organizationId, mine.telephonyConfigurationId)).toEqual(Option.none())
      expect(Option.isSome(yield* authTokenOf(mine.organizationId, mine.telephonyConfigurationId))).toBe(true)
    })))
})
