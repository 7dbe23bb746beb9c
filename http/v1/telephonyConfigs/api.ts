import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { ProviderConfig } from "../../../src/telephony/providerConfig.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, IdFromPath, pathSchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"
import { EmptyObject, JsonObject, Timestamp } from "../../../src/domain/wireTypes.ts"

const Name = Schema.String.pipe(
  Schema.trimmed({ message: () => "Name must not start or end with spaces" }),
  Schema.minLength(1),
  Schema.maxLength(64)
)
const Region = Schema.NullOr(Schema.String.pipe(Schema.length(2)))

export const CreateTelephonyConfigRequest = bodySchema("CreateTelephonyConfig", {
  name: Name,
  is_default_outbound: Schema.optional(Schema.Boolean),
  default_region: Schema.optional(Region),
  config: ProviderConfig
})

export const UpdateTelephonyConfigRequest = bodySchema("UpdateTelephonyConfig", {
  name: Schema.optional(Name),
  is_default_outbound: Schema.optional(Schema.Boolean),
  default_region: Schema.optional(Region),
  config: Schema.optional(JsonObject)
})

const listItemFields = {
  id: Schema.Int,
  name: Schema.String,
  provider: Schema.String,
  is_default_outbound: Schema.Boolean,
  default_region: Schema.NullOr(Schema.String),
  inactive: Schema.Boolean,
  inactive_reason: Schema.NullOr(Schema.String),
  phone_number_count: Schema.Int,
  is_ready_for_outbound: Schema.Boolean,
  outbound_blocked_reason: Schema.NullOr(Schema.String),
  created_at: Timestamp,
  updated_at: Timestamp
}

export const TelephonyConfigurationListItem = Schema.Struct(listItemFields).annotations({
  identifier: "TelephonyConfigurationListItem"
})

export const TelephonyConfigurationResponse = Schema.Struct({
  ...listItemFields,
  config: JsonObject.annotations({
    description: "The provider fields; secrets are masked (****1234)"
  })
}).annotations({ identifier: "TelephonyConfigurationResponse" })

export const TelephonyConfigurationListResponse = Schema.Struct({
  configurations: Schema.Array(TelephonyConfigurationListItem)
}).annotations({ identifier: "TelephonyConfigurationListResponse" })

export const CreatePhoneNumberRequest = bodySchema("CreatePhoneNumber", {
  address: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)),
  label: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(100)))),
  is_active: Schema.optional(Schema.Boolean),
  is_default_caller_id: Schema.optional(Schema.Boolean),
  inbound_workflow_id: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.positive()))).annotations({
    description: "The agent answering calls to this number; point the number's voice webhook at /api/v1/telephony/{provider}/inbound/{config_id}"
  })
})

export const UpdatePhoneNumberRequest = bodySchema("UpdatePhoneNumber", {
  address: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))),
  label: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(100)))),
  is_active: Schema.optional(Schema.Boolean),
  is_default_caller_id: Schema.optional(Schema.Boolean),
  inbound_workflow_id: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.positive()))).annotations({
    description: "The agent answering calls to this number; point the number's voice webhook at /api/v1/telephony/{provider}/inbound/{config_id}"
  })
})

export const PhoneNumberResponse = Schema.Struct({
  id: Schema.Int,
  telephony_configuration_id: Schema.Int,
  address: Schema.String,
  label: Schema.NullOr(Schema.String),
  is_active: Schema.Boolean,
  is_default_caller_id: Schema.Boolean,
  inbound_workflow_id: Schema.NullOr(Schema.Int),
  created_at: Timestamp,
  updated_at: Timestamp
}).annotations({ identifier: "PhoneNumberResponse" })

export const PhoneNumberListResponse = Schema.Struct({ phone_numbers: Schema.Array(PhoneNumberResponse) }).annotations({
  identifier: "PhoneNumberListResponse"
})

const ConfigPath = pathSchema("TelephonyConfig", { config_id: IdFromPath })
const NumberPath = pathSchema("PhoneNumber", { config_id: IdFromPath, number_id: IdFromPath })

export const TelephonyConfigsApi = HttpApiGroup.make("telephonyConfigs")
  .add(HttpApiEndpoint.get("list", "/").addSuccess(TelephonyConfigurationListResponse))
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(CreateTelephonyConfigRequest)
      .addSuccess(TelephonyConfigurationResponse)
      .addError(HttpConflict)
  )
  .add(HttpApiEndpoint.get("get", "/:config_id").setPath(ConfigPath).addSuccess(TelephonyConfigurationResponse).addError(HttpNotFound))
  .add(
    HttpApiEndpoint.put("update", "/:config_id")
      .setPath(ConfigPath)
      .setPayload(UpdateTelephonyConfigRequest)
      .addSuccess(TelephonyConfigurationResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(HttpApiEndpoint.del("remove", "/:config_id").setPath(ConfigPath).addSuccess(EmptyObject).addError(HttpNotFound).addError(HttpConflict))
  .add(
    HttpApiEndpoint.get("listNumbers", "/:config_id/phone-numbers")
      .setPath(ConfigPath)
      .addSuccess(PhoneNumberListResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("addNumber", "/:config_id/phone-numbers")
      .setPath(ConfigPath)
      .setPayload(CreatePhoneNumberRequest)
      .addSuccess(PhoneNumberResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.put("updateNumber", "/:config_id/phone-numbers/:number_id")
      .setPath(NumberPath)
      .setPayload(UpdatePhoneNumberRequest)
      .addSuccess(PhoneNumberResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.del("removeNumber", "/:config_id/phone-numbers/:number_id")
      .setPath(NumberPath)
      .addSuccess(EmptyObject)
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .addError(HttpValidationFailed)
  .middleware(V1Auth)
  .prefix("/api/v1/organizations/telephony-configs")
