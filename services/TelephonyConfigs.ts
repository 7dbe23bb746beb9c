import { Context, type Effect } from "effect"
import type { Conflict, NotFound, ValidationFailed } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { Provider, ProviderConfig } from "../src/telephony/providerConfig.ts"

export interface TelephonyConfigListItem {
  readonly id: number
  readonly name: string
  readonly provider: Provider
  readonly is_default_outbound: boolean
  readonly default_region: string | null
  readonly inactive: boolean
  readonly inactive_reason: string | null
  /** Active phone numbers. */
  readonly phone_number_count: number
  readonly is_ready_for_outbound: boolean
  readonly outbound_blocked_reason: string | null
  readonly created_at: Date
  readonly updated_at: Date
}

export interface TelephonyConfigView extends TelephonyConfigListItem {
  /** Provider fields with every secret masked. */
  readonly config: Record<string, unknown>
}

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

export interface PhoneNumberView {
  readonly id: number
  readonly telephony_configuration_id: number
  readonly address: string
  readonly label: string | null
  readonly is_active: boolean
  readonly is_default_caller_id: boolean
  /** The agent that answers calls to this number (null: the number takes no inbound calls). */
  readonly inbound_workflow_id: number | null
  readonly created_at: Date
  readonly updated_at: Date
}

export interface PhoneNumberInput {
  readonly address?: string | undefined
  readonly label?: string | null | undefined
  readonly is_active?: boolean | undefined
  readonly is_default_caller_id?: boolean | undefined
  readonly inbound_workflow_id?: number | null | undefined
}

/** A configuration ready to place calls: decrypted credentials, for the dialer only (never a response). */
export interface OutboundTelephony {
  readonly id: number
  readonly name: string
  readonly default_region: string | null
  readonly api_base_url: string
  readonly config: ProviderConfig
  readonly caller_ids: ReadonlyArray<string>
}

/** An organization's carrier accounts and phone numbers; every operation is scoped to the caller's organization. */
export interface TelephonyConfigsShape {
  readonly list: (principal: Principal) => Effect.Effect<ReadonlyArray<TelephonyConfigListItem>>
  readonly get: (principal: Principal, id: number) => Effect.Effect<TelephonyConfigView, NotFound>
  readonly create: (
    principal: Principal,
    input: TelephonyConfigInput
  ) => Effect.Effect<TelephonyConfigView, Conflict | ValidationFailed>
  readonly update: (
    principal: Principal,
    id: number,
    input: TelephonyConfigUpdate
  ) => Effect.Effect<TelephonyConfigView, NotFound | Conflict | ValidationFailed>
  /** Refused (Conflict) while a running or paused campaign dials through it. */
  readonly remove: (principal: Principal, id: number) => Effect.Effect<void, NotFound | Conflict>
  readonly listNumbers: (
    principal: Principal,
    configId: number
  ) => Effect.Effect<ReadonlyArray<PhoneNumberView>, NotFound>
  readonly addNumber: (
    principal: Principal,
    configId: number,
    input: PhoneNumberInput & { readonly address: string }
  ) => Effect.Effect<PhoneNumberView, NotFound | Conflict | ValidationFailed>
  readonly updateNumber: (
    principal: Principal,
    configId: number,
    numberId: number,
    input: PhoneNumberInput
  ) => Effect.Effect<PhoneNumberView, NotFound | Conflict | ValidationFailed>
  readonly removeNumber: (principal: Principal, configId: number, numberId: number) => Effect.Effect<void, NotFound>
  /**
   * The configuration a campaign dials through: the one named, else the organization's default
   * outbound one. Fails, saying why, when there is none or it is inactive or has no active
   * phone number to call from.
   */
  readonly outbound: (
    organizationId: number,
    preferredId: number | null
  ) => Effect.Effect<OutboundTelephony, ValidationFailed>
}

export class TelephonyConfigs
  extends Context.Tag("talkgraph/TelephonyConfigs")<TelephonyConfigs, TelephonyConfigsShape>()
{}
