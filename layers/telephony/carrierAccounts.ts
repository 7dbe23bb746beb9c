import { Clock, Effect, Option } from "effect"
import type { CarrierAccount } from "../../services/Telephony.ts"
import { type OutboundTelephony, TelephonyConfigs } from "../../services/TelephonyConfigs.ts"

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

/** Decrypting credentials for every callback would cost a few queries each; a short cache is enough. */
const CACHE_MS = 30_000

/** Carrier accounts by configuration, for verifying webhooks and reconciling calls. */
export const makeCarrierAccounts = Effect.gen(function*() {
  const configs = yield* TelephonyConfigs
  const cache = new Map<number, { readonly at: number; readonly account: CarrierAccount }>()

  const forConfiguration = (organizationId: number, configurationId: number) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const cached = cache.get(configurationId)
      if (cached && now - cached.at < CACHE_MS) return Option.some(cached.account)
      const outbound = yield* configs.outbound(organizationId, configurationId).pipe(Effect.option)
      if (Option.isNone(outbound)) return Option.none<CarrierAccount>()
      const account = carrierAccount(outbound.value)
      cache.set(configurationId, { at: now, account })
      return Option.some(account)
    })

  return { forConfiguration }
})
