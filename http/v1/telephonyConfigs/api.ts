import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EmptyObject, JsonObject } from "../../../src/domain/wireTypes.ts"
import { ProviderConfig } from "../../../src/telephony/providerConfig.ts"
import { PhoneNumber, TelephonyConfig, TelephonyConfigSummary } from "../../../src/telephony/telephonyConfigRecord.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, IdFromPath, pathSchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

const Name = Schema.String.pipe(
  Schema.trimmed({ message: () => "Name must not start or end with spaces" }),
  Schema.minLength(1),
  Schema.maxLength(64)
)
const Region = Schema.NullOr(Schema.String.pipe(Schema.length(2)))

/**
 * An unknown field is refused by name (422 `extra_forbidden`), at the top and inside `config`: a
 * misplaced `api_base_url` (it belongs in `config`) used to be dropped in silence.
 */
const refusingUnknownFields = { parseOptions: { errors: "all", onExcessProperty: "error" } } as const

export const CreateTelephonyConfigRequest = bodySchema("CreateTelephonyConfig", {
  name: Name,
  is_default_outbound: Schema.optional(Schema.Boolean),
  default_region: Schema.optional(Region),
  config: ProviderConfig
}).annotations(refusingUnknownFields)

export const UpdateTelephonyConfigRequest = bodySchema("UpdateTelephonyConfig", {
  name: Schema.optional(Name),
  is_default_outbound: Schema.optional(Schema.Boolean),
  default_region: Schema.optional(Region),
  config: Schema.optional(JsonObject)
}).annotations(refusingUnknownFields)

/** The configuration and its phone numbers are defined once, in src/telephony/telephonyConfigRecord.ts. */
export const TelephonyConfigurationListItem = TelephonyConfigSummary
export const TelephonyConfigurationResponse = TelephonyConfig

export const TelephonyConfigurationListResponse = Schema.Struct({
  configurations: Schema.Array(TelephonyConfigurationListItem)
}).annotations({ identifier: "TelephonyConfigurationListResponse" })

export const CreatePhoneNumberRequest = bodySchema("CreatePhoneNumber", {
  address: Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255)),
  label: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(100)))),
  is_active: Schema.optional(Schema.Boolean),
  is_default_caller_id: Schema.optional(Schema.Boolean),
  inbound_workflow_id: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.positive(), Schema.brand("WorkflowId"))))
    .annotations({
      description:
        "The agent answering calls to this number; point the number's voice webhook at /api/v1/telephony/{provider}/inbound/{config_id}"
    })
})

export const UpdatePhoneNumberRequest = bodySchema("UpdatePhoneNumber", {
  address: Schema.optional(Schema.String.pipe(Schema.minLength(1), Schema.maxLength(255))),
  label: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(100)))),
  is_active: Schema.optional(Schema.Boolean),
  is_default_caller_id: Schema.optional(Schema.Boolean),
  inbound_workflow_id: Schema.optional(Schema.NullOr(Schema.Int.pipe(Schema.positive(), Schema.brand("WorkflowId"))))
    .annotations({
      description:
        "The agent answering calls to this number; point the number's voice webhook at /api/v1/telephony/{provider}/inbound/{config_id}"
    })
})

export const PhoneNumberResponse = PhoneNumber

export const PhoneNumberListResponse = Schema.Struct({ phone_numbers: Schema.Array(PhoneNumberResponse) }).annotations({
  identifier: "PhoneNumberListResponse"
})

const ConfigId = IdFromPath.pipe(Schema.brand("TelephonyConfigId"))
const ConfigPath = pathSchema("TelephonyConfig", { config_id: ConfigId })
const NumberPath = pathSchema("PhoneNumber", { config_id: ConfigId, number_id: IdFromPath })

export const TelephonyConfigsApi = HttpApiGroup.make("telephonyConfigs")
  .annotate(
    OpenApi.Description,
    "Carrier accounts (Twilio, Vonage, Telnyx, Plivo) and their phone numbers. Changes need `telephony:write`; reading also accepts `campaigns:read`. Secrets are only ever shown masked."
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .annotate(OpenApi.Summary, "List telephony configurations")
      .annotate(
        OpenApi.Description,
        "The organization's carrier accounts with their phone-number count and whether each is ready for outbound calls (and why not)."
      )
      .addSuccess(TelephonyConfigurationListResponse)
  )
  .add(
    HttpApiEndpoint.post("create", "/")
      .annotate(OpenApi.Summary, "Create a telephony configuration")
      .annotate(
        OpenApi.Description,
        "Stores a carrier account; its credentials are encrypted at rest. A name already used in the organization answers 409."
      )
      .setPayload(CreateTelephonyConfigRequest)
      .addSuccess(TelephonyConfigurationResponse)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.get("get", "/:config_id")
      .annotate(OpenApi.Summary, "Get a telephony configuration")
      .annotate(OpenApi.Description, "One carrier account, its provider fields with secrets masked.")
      .setPath(ConfigPath)
      .addSuccess(TelephonyConfigurationResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.put("update", "/:config_id")
      .annotate(OpenApi.Summary, "Change a telephony configuration")
      .annotate(
        OpenApi.Description,
        "Changes the name, default-outbound flag, region or provider fields. Changing where a credential is sent requires sending the credential again."
      )
      .setPath(ConfigPath)
      .setPayload(UpdateTelephonyConfigRequest)
      .addSuccess(TelephonyConfigurationResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.del("remove", "/:config_id")
      .annotate(OpenApi.Summary, "Delete a telephony configuration")
      .annotate(
        OpenApi.Description,
        "Deletes a carrier account. 409 naming the campaigns while a running or paused campaign uses it."
      )
      .setPath(ConfigPath)
      .addSuccess(EmptyObject)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.get("listNumbers", "/:config_id/phone-numbers")
      .annotate(OpenApi.Summary, "List phone numbers")
      .annotate(OpenApi.Description, "The phone numbers of a carrier account.")
      .setPath(ConfigPath)
      .addSuccess(PhoneNumberListResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("addNumber", "/:config_id/phone-numbers")
      .annotate(OpenApi.Summary, "Add a phone number")
      .annotate(
        OpenApi.Description,
        "Adds a number to a carrier account, optionally as the default caller id or answered by an agent (`inbound_workflow_id`). A number already registered in the organization answers 409."
      )
      .setPath(ConfigPath)
      .setPayload(CreatePhoneNumberRequest)
      .addSuccess(PhoneNumberResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.put("updateNumber", "/:config_id/phone-numbers/:number_id")
      .annotate(OpenApi.Summary, "Change a phone number")
      .annotate(OpenApi.Description, "Changes a number's label, state, caller-id default or the agent answering it.")
      .setPath(NumberPath)
      .setPayload(UpdatePhoneNumberRequest)
      .addSuccess(PhoneNumberResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.del("removeNumber", "/:config_id/phone-numbers/:number_id")
      .annotate(OpenApi.Summary, "Remove a phone number")
      .annotate(OpenApi.Description, "Removes a number from a carrier account.")
      .setPath(NumberPath)
      .addSuccess(EmptyObject)
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .addError(HttpValidationFailed)
  .middleware(V1Auth)
  .prefix("/api/v1/organizations/telephony-configs")
