import { Context, type Effect, type Option } from "effect"
import type { CarrierAccount } from "./Telephony.ts"

/**
 * Carrier accounts by telephony configuration, for verifying webhooks and reconciling calls.
 * Decrypting credentials for every callback would cost a few queries each, so accounts are kept
 * for a short while; a configuration that is changed or deleted is forgotten at once, so a
 * rotated credential is used by every caller in this process from the moment it is saved.
 */
export interface CarrierAccountsShape {
  /** The account of a configuration that can place calls; none when it does not exist or cannot. */
  readonly forConfiguration: (
    organizationId: number,
    configurationId: number
  ) => Effect.Effect<Option.Option<CarrierAccount>>
  /** Forgets what is kept of a configuration: its credentials, provider or phone numbers changed. */
  readonly invalidate: (organizationId: number, configurationId: number) => Effect.Effect<void>
}

export class CarrierAccounts
  extends Context.Tag("talkgraph/CarrierAccounts")<CarrierAccounts, CarrierAccountsShape>()
{}
