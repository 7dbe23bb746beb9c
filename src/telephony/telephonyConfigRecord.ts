import { Schema } from "effect"
import { TelephonyConfigId, WorkflowId } from "../domain/ids.ts"
import { JsonObject, Timestamp } from "../domain/wireTypes.ts"
import { CarrierProvider } from "./providerConfig.ts"

const summaryFields = {
  id: TelephonyConfigId,
  name: Schema.String,
  /** One of the carriers; the OpenAPI document has always described it as a string. */
  provider: CarrierProvider.annotations({ jsonSchema: { type: "string" } }),
  is_default_outbound: Schema.Boolean,
  default_region: Schema.NullOr(Schema.String),
  inactive: Schema.Boolean,
  inactive_reason: Schema.NullOr(Schema.String),
  /** Active phone numbers. */
  phone_number_count: Schema.Int,
  is_ready_for_outbound: Schema.Boolean,
  outbound_blocked_reason: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}

/**
 * A telephony configuration as a list shows it (TelephonyConfigurationListItem). The one
 * definition: the service's view is its type, the HTTP response its encoding, and the row type
 * derives from it.
 */
export const TelephonyConfigSummary = Schema.Struct(summaryFields).annotations({
  identifier: "TelephonyConfigurationListItem"
})
export type TelephonyConfigSummary = typeof TelephonyConfigSummary.Type

/** One telephony configuration (TelephonyConfigurationResponse): the summary and its provider fields. */
export const TelephonyConfig = Schema.Struct({
  ...summaryFields,
  config: JsonObject.annotations({
    description: "The provider fields; secrets are masked (****1234)"
  })
}).annotations({ identifier: "TelephonyConfigurationResponse" })
export type TelephonyConfig = typeof TelephonyConfig.Type

/** A phone number of a telephony configuration (PhoneNumberResponse). */
export const PhoneNumber = Schema.Struct({
  id: Schema.Int,
  telephony_configuration_id: TelephonyConfigId,
  address: Schema.String,
  label: Schema.NullOr(Schema.String),
  is_active: Schema.Boolean,
  is_default_caller_id: Schema.Boolean,
  /** The agent that answers calls to this number (null: the number takes no inbound calls). */
  inbound_workflow_id: Schema.NullOr(WorkflowId),
  /** When the carrier refused to place a campaign's call from this number; it leaves caller-ID pools until edited. */
  caller_id_refused_at: Schema.NullOr(Timestamp),
  caller_id_refused_reason: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "PhoneNumberResponse" })
export type PhoneNumber = typeof PhoneNumber.Type
