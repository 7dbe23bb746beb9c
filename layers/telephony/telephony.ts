import { Layer } from "effect"
import type { Provider } from "../../src/telephony/providerConfig.ts"
import { type CarrierAdapter, Telephony } from "../../services/Telephony.ts"
import { plivoAdapter } from "./carriers/plivo.ts"
import { telnyxAdapter } from "./carriers/telnyx.ts"
import { twilioAdapter } from "./carriers/twilio.ts"
import { vonageAdapter } from "./carriers/vonage.ts"

const adapters: Readonly<Record<Provider, CarrierAdapter>> = {
  twilio: twilioAdapter,
  vonage: vonageAdapter,
  telnyx: telnyxAdapter,
  plivo: plivoAdapter
}

/** Every carrier behind one port; the configuration's provider picks the adapter. */
export const TelephonyLive = Layer.succeed(Telephony, Telephony.of({ adapter: (provider) => adapters[provider] }))
