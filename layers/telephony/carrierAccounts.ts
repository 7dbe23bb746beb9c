import { SqlClient } from "@effect/sql"
import { Cache, Data, Duration, Effect, Layer, Option } from "effect"
import { CarrierAccounts } from "../../services/CarrierAccounts.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import type { CarrierAccount } from "../../services/Telephony.ts"
import type { OutboundTelephony } from "../../services/TelephonyConfigs.ts"
import { OrganizationId, TelephonyConfigId } from "../../src/domain/ids.ts"
import { readOutbound } from "./outboundConfiguration.ts"

/** A telephony configuration as the carrier adapters use it: decrypted credentials, in memory only. */
export const carrierAccount = (outbound: OutboundTelephony): CarrierAccount => {
  const credentials: Record<string, string> = {}
  for (const [name, value] of Object.entries(outbound.config)) {
    if (name !== "provider" && name !== "api_base_url" && typeof value === "string") credentials[name] = value
  }
  return {
    configurationId: outbound.id,
    provider: outbound.config.provider,
    apiBaseUrl: outbound.api_base_url,
    credentials,
    machineDetection: outbound.config.amd_enabled === true
  }
}

/** Long enough to spare a burst of callbacks the decryption; a change is seen at once anyway (`invalidate`). */
const KEPT_FOR = Duration.seconds(30)

/** Configurations kept at once; beyond this the least recently used are read again when needed. */
const CAPACITY = 10_000

class ConfigurationKey extends Data.Class<{ readonly organizationId: number; readonly configurationId: number }> {}

interface Kept {
  readonly account: Option.Option<CarrierAccount>
  /** The configuration's generation when the read began: `invalidate` moves it on. */
  readonly generation: number
}

export const CarrierAccountsLive = Layer.effect(
  CarrierAccounts,
  Effect.gen(function*() {
    const outbound = readOutbound(yield* SqlClient.SqlClient, yield* SecretBox)
    const generations = new Map<number, number>()
    const generationOf = (configurationId: number) => generations.get(configurationId) ?? 0

    const cache = yield* Cache.make({
      capacity: CAPACITY,
      timeToLive: KEPT_FOR,
      lookup: (key: ConfigurationKey) =>
        Effect.suspend(() => {
          const generation = generationOf(key.configurationId)
          // Keyed by plain numbers: the voice paths that ask do not carry branded ids yet.
          return outbound(OrganizationId.make(key.organizationId), TelephonyConfigId.make(key.configurationId)).pipe(
            Effect.map((found): Kept => ({ account: Option.some(carrierAccount(found)), generation })),
            Effect.catchTag("ValidationFailed", () => Effect.succeed<Kept>({ account: Option.none(), generation }))
          )
        })
    })

    const forConfiguration = Effect.fn("CarrierAccounts.forConfiguration")(
      function*(organizationId: number, configurationId: number) {
        const key = new ConfigurationKey({ organizationId, configurationId })
        const kept = yield* cache.get(key)
        // Not kept: a configuration that cannot place calls may be fixed any moment, and a read
        // that began before a change may hold what the change replaced.
        if (Option.isNone(kept.account) || kept.generation !== generationOf(configurationId)) {
          yield* cache.invalidateWhen(key, (value) => value === kept)
        }
        return kept.account
      }
    )

    const invalidate = Effect.fn("CarrierAccounts.invalidate")(
      function*(organizationId: number, configurationId: number) {
        generations.set(configurationId, generationOf(configurationId) + 1)
        yield* cache.invalidate(new ConfigurationKey({ organizationId, configurationId }))
      }
    )

    return CarrierAccounts.of({ forConfiguration, invalidate })
  })
)
