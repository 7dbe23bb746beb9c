import type { CalleeScript } from "./calleeScript.ts"
import { startFakePlivo } from "./fakePlivo.ts"
import { startFakeTelnyx } from "./fakeTelnyx.ts"
import { startFakeTwilio } from "./fakeTwilio.ts"
import { startFakeVonage } from "./fakeVonage.ts"
import type { CalleeAnswer, DestinationBehaviour, EndStatus, LoopbackCall, StandInOptions } from "./loopbackCarrier.ts"

/** Every carrier the product dials through, each with its loopback stand-in. */
export const carrierProviders = ["twilio", "vonage", "telnyx", "plivo"] as const

export type CarrierProviderName = typeof carrierProviders[number]

/** What tests of any carrier use: its calls, its callee scripts, and the configuration that points at it. */
export interface CarrierStandIn {
  readonly provider: CarrierProviderName
  readonly url: string
  readonly calls: () => ReadonlyArray<LoopbackCall>
  readonly find: (id: string) => LoopbackCall | undefined
  readonly liveCalls: () => number
  readonly maxLiveCalls: () => number
  readonly callbackFailures: () => ReadonlyArray<string>
  /** Callbacks sent again after their connection failed, as the carrier documents it retries them. */
  readonly callbackRetries: () => ReadonlyArray<string>
  /** Every callback answered: when it was sent and how many milliseconds the product took. */
  readonly callbackTimes: () => ReadonlyArray<{ readonly url: string; readonly sentAt: number; readonly ms: number }>
  readonly calleeScript: (to: string, answer: CalleeScript | CalleeAnswer) => void
  /** What a transfer's destination does when the carrier rings it (as the carrier writes it; default: answers). */
  readonly destinationScript: (destination: string, behaviour: DestinationBehaviour) => void
  readonly endCall: (id: string, status?: EndStatus) => void
  /** The next `count` call creations are refused as this carrier refuses a number it cannot call. */
  readonly rejectNextCalls: (count: number) => void
  /** Calls placed from this number are refused as this carrier refuses a caller ID the account may not use. */
  readonly unverifyCallerId: (from: string) => void
  /** The `config` of a telephony configuration pointing at this carrier. */
  readonly telephonyConfig: (settings?: { readonly machineDetection?: boolean }) => Record<string, unknown>
  readonly close: () => Promise<void>
}

export const startCarrierStandIn = (
  provider: CarrierProviderName,
  options: StandInOptions = {}
): Promise<CarrierStandIn> => {
  switch (provider) {
    case "twilio":
      return startFakeTwilio(options)
    case "vonage":
      return startFakeVonage(options)
    case "telnyx":
      return startFakeTelnyx(options)
    case "plivo":
      return startFakePlivo(options)
  }
}

/** A number as the carrier writes it: Vonage and Plivo take digits without the "+". */
export const carrierNumber = (provider: CarrierProviderName, e164: string) =>
  provider === "vonage" || provider === "plivo" ? e164.replace(/^\+/, "") : e164
