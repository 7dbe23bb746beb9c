import { Layer } from "effect"
import { CarrierAccountsLive } from "./carrierAccounts.ts"
import { TelephonyConfigsLive } from "./telephonyConfigs.ts"

/**
 * Telephony configurations with the one cache of their carrier accounts beside them: whoever
 * reads accounts (webhooks, reconciliation, voice calls) sees what the configurations forget.
 */
export const TelephonyConfigsAreaLive = TelephonyConfigsLive.pipe(Layer.provideMerge(CarrierAccountsLive))
