import { Effect, Layer } from "effect"
import { OutboundHttp, type OutboundHttpShape } from "../../services/OutboundHttp.ts"
import { type CarrierAdapter, Telephony, type WarmTransferAdapter } from "../../services/Telephony.ts"
import type { Provider } from "../../src/telephony/providerConfig.ts"
import { plivoAdapter } from "./carriers/plivo.ts"
import { telnyxAdapter } from "./carriers/telnyx.ts"
import { twilioAdapter } from "./carriers/twilio.ts"
import { vonageAdapter } from "./carriers/vonage.ts"

const adapters: Readonly<Record<Provider, CarrierAdapter<OutboundHttp>>> = {
  twilio: twilioAdapter,
  vonage: vonageAdapter,
  telnyx: telnyxAdapter,
  plivo: plivoAdapter
}

const warmThrough = (warm: WarmTransferAdapter<OutboundHttp>, outbound: OutboundHttpShape): WarmTransferAdapter => {
  const { brief } = warm
  return {
    ...warm,
    dial: (account, request) => Effect.provideService(warm.dial(account, request), OutboundHttp, outbound),
    brief: brief === null
      ? null
      : (account, legId, request) => Effect.provideService(brief(account, legId, request), OutboundHttp, outbound),
    join: (account, caller, legId, request) =>
      Effect.provideService(warm.join(account, caller, legId, request), OutboundHttp, outbound)
  }
}

/** An adapter whose REST calls leave through the given outbound client. */
const through = ({ warm, ...adapter }: CarrierAdapter<OutboundHttp>, outbound: OutboundHttpShape): CarrierAdapter => ({
  ...adapter,
  placeCall: (account, call) => Effect.provideService(adapter.placeCall(account, call), OutboundHttp, outbound),
  hangUp: (account, providerCallId) =>
    Effect.provideService(adapter.hangUp(account, providerCallId), OutboundHttp, outbound),
  callStatus: (account, providerCallId) =>
    Effect.provideService(adapter.callStatus(account, providerCallId), OutboundHttp, outbound),
  transfer: (account, call, request) =>
    Effect.provideService(adapter.transfer(account, call, request), OutboundHttp, outbound),
  ...(warm ? { warm: warmThrough(warm, outbound) } : {})
})

/** Every carrier behind one port; the configuration's provider picks the adapter. */
export const TelephonyLive = Layer.effect(
  Telephony,
  Effect.map(OutboundHttp, (outbound) => {
    const ready = Object.fromEntries(
      Object.entries(adapters).map(([provider, adapter]) => [provider, through(adapter, outbound)])
    ) as Record<
      Provider,
      CarrierAdapter
    >
    return Telephony.of({ adapter: (provider) => ready[provider] })
  })
)
