import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { EmptyObject, JsonValue } from "../../../src/domain/wireTypes.ts"
import { Credential, CredentialType } from "../../../src/tools/credentialRecord.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, pathSchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

const Name = Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(255))
const Data = Schema.Record({ key: Schema.String, value: JsonValue })
const Host = Schema.String.pipe(Schema.maxLength(260)).annotations({
  description:
    "The one host (name[:port]) the secret may be sent to. Bound to the first tool's URL host when omitted; changing it needs the secret sent again."
})

export const CreateCredentialRequest = bodySchema("CreateCredential", {
  name: Name,
  description: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(2000)))),
  credential_type: CredentialType,
  credential_data: Data.annotations({
    description:
      "api_key: {header_name, api_key}; bearer_token: {token}; basic_auth: {username, password}; custom_header: {header_name, header_value}; none: {}. Encrypted at rest, never returned."
  }),
  host: Schema.optional(Schema.NullOr(Host))
})

export const UpdateCredentialRequest = bodySchema("UpdateCredential", {
  name: Schema.optional(Name),
  description: Schema.optional(Schema.NullOr(Schema.String.pipe(Schema.maxLength(2000)))),
  credential_type: Schema.optional(CredentialType),
  credential_data: Schema.optional(Data.annotations({
    description: "Secret fields sent back masked (****abcd) keep their stored value."
  })),
  host: Schema.optional(Schema.NullOr(Host))
})

const CredentialPath = pathSchema("Credential", { credential_uuid: Schema.String })

export const CredentialsApi = HttpApiGroup.make("credentials")
  .annotate(
    OpenApi.Description,
    "Credentials for tools' HTTP requests (Dograh's shape): encrypted at rest, shown masked, each bound to one host. Reading needs `agents:read`; changing needs `agents:write` and the admin role."
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .annotate(OpenApi.Summary, "List credentials")
      .annotate(OpenApi.Description, "The organization's credentials, secrets masked.")
      .addSuccess(Schema.Array(Credential))
  )
  .add(
    HttpApiEndpoint.post("create", "/")
      .annotate(OpenApi.Summary, "Create a credential")
      .annotate(
        OpenApi.Description,
        "Stores a credential for tools' requests; credential_data is encrypted at rest and never returned."
      )
      .setPayload(CreateCredentialRequest)
      .addSuccess(Credential)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.get("get", "/:credential_uuid")
      .annotate(OpenApi.Summary, "Get a credential")
      .annotate(OpenApi.Description, "One credential, secrets masked.")
      .setPath(CredentialPath)
      .addSuccess(Credential)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.put("update", "/:credential_uuid")
      .annotate(OpenApi.Summary, "Change a credential")
      .annotate(
        OpenApi.Description,
        "Changes its name, description or data. A secret sent back masked keeps its stored value; moving the credential to another host needs the secret sent again."
      )
      .setPath(CredentialPath)
      .setPayload(UpdateCredentialRequest)
      .addSuccess(Credential)
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.del("remove", "/:credential_uuid")
      .annotate(OpenApi.Summary, "Delete a credential")
      .annotate(OpenApi.Description, "Deletes it; refused (409) while a tool uses it.")
      .setPath(CredentialPath)
      .addSuccess(EmptyObject)
      .addError(HttpNotFound)
      .addError(HttpConflict)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/credentials")
