import { Context, type Effect } from "effect"
import type { Conflict, NotFound, ValidationFailed } from "../src/domain/errors.ts"
import type { OrganizationId, TelephonyConfigId, WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { ProviderConfig } from "../src/telephony/providerConfig.ts"
import type { PhoneNumber, TelephonyConfig, TelephonyConfigSummary } from "../src/telephony/telephonyConfigRecord.ts"

/** The configuration and its phone numbers are defined once, in src/telephony/telephonyConfigRecord.ts. */
export type TelephonyConfigListItem = TelephonyConfigSummary

/** Provider fields with every secret masked. */
export type TelephonyConfigView = TelephonyConfig

export interface TelephonyConfigInput {
  readonly name: string
  readonly is_default_outbound?: boolean | undefined
  readonly default_region?: string | null | undefined
  readonly config: ProviderConfig
}

export interface TelephonyConfigUpdate {
  readonly name?: string | undefined
  readonly is_default_outbound?: boolean | undefined
  readonly default_region?: string | null | undefined
  /** Checked against the provider's fields after masked or omitted secrets are restored. */
  readonly config?: Record<string, unknown> | undefined
}

export type PhoneNumberView = PhoneNumber

export interface PhoneNumberInput {
  readonly address?: string | undefined
  readonly label?: string | null | undefined
  readonly is_active?: boolean | undefined
  readonly is_default_caller_id?: boolean | undefined
  readonly inbound_workflow_id?: WorkflowId | null | undefined
}

/** A configuration ready to place calls: decrypted credentials, for the dialer only (never a response). */
export interface OutboundTelephony {
  readonly id: TelephonyConfigId
  readonly name: string
  readonly default_region: string | null
  readonly api_base_url: string
  readonly config: ProviderConfig
  readonly caller_ids: ReadonlyArray<string>
}

/** An organization's carrier accounts and phone numbers; every operation is scoped to the caller's organization. */
export interface TelephonyConfigsShape {
  readonly list: (principal: Principal) => Effect.Effect<ReadonlyArray<TelephonyConfigListItem>>
  readonly get: (principal: Principal, id: TelephonyConfigId) => Effect.Effect<TelephonyConfigView, NotFound>
  readonly create: (
    principal: Principal,
    input: TelephonyConfigInput
  ) => Effect.Effect<TelephonyConfigView, Conflict | ValidationFailed>
  readonly update: (
    principal: Principal,
    id: TelephonyConfigId,
    input: TelephonyConfigUpdate
  ) => Effect.Effect<TelephonyConfigView, NotFound | Conflict | ValidationFailed>
  /** Refused (Conflict) while a running or paused campaign dials through it. */
  readonly remove: (principal: Principal, id: TelephonyConfigId) => Effect.Effect<void, NotFound | Conflict>
  readonly listNumbers: (
    principal: Principal,
    configId: TelephonyConfigId
  ) => Effect.Effect<ReadonlyArray<PhoneNumberView>, NotFound>
  readonly addNumber: (
    principal: Principal,
    configId: TelephonyConfigId,
    input: PhoneNumberInput & { readonly address: string }
  ) => Effect.Effect<PhoneNumberView, NotFound | Conflict | ValidationFailed>
  readonly updateNumber: (
    principal: Principal,
    configId: TelephonyConfigId,
    numberId: number,
    input: PhoneNumberInput
  ) => Effect.Effect<PhoneNumberView, NotFound | Conflict | ValidationFailed>
  readonly removeNumber: (
    principal: Principal,
    configId: TelephonyConfigId,
    numberId: number
  ) => Effect.Effect<void, NotFound>
  /**
   * The configuration a campaign dials through: the one named, else the organization's default
   * outbound one. Fails, saying why, when there is none or it is inactive or has no active
   * phone number to call from.
   */
  readonly outbound: (
    organizationId: OrganizationId,
    preferredId: TelephonyConfigId | null
  ) => Effect.Effect<OutboundTelephony, ValidationFailed>
}

export class TelephonyConfigs
  extends Context.Tag("talkgraph/TelephonyConfigs")<TelephonyConfigs, TelephonyConfigsShape>()
{}
