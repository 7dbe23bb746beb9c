import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { Scope } from "../../../src/domain/scopes.ts"
import { ApiKey, CreatedApiKey } from "../../../src/identity/apiKeyRecord.ts"
import { HttpForbidden, HttpNotFound } from "../../errors.ts"
import { bodySchema, BooleanFromQuery, IdFromPath, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

export const CreateApiKeyRequest = bodySchema("CreateApiKey", {
  name: Schema.String.pipe(
    Schema.trimmed({ message: () => "Name must not start or end with spaces" }),
    Schema.minLength(1),
    Schema.maxLength(100)
  ),
  scopes: Schema.optional(Schema.Array(Scope).pipe(Schema.minItems(1)))
})

/** An API key and a created key are defined once, in src/identity/apiKeyRecord.ts. */
export const CreateApiKeyResponse = CreatedApiKey
export const ApiKeyResponse = ApiKey

const ApiKeyPath = pathSchema("ApiKey", { id: IdFromPath })

export const ApiKeyListQuery = querySchema("ApiKeyList", {
  include_archived: Schema.optionalWith(BooleanFromQuery, { default: () => false }).annotations({
    description: "Also list revoked keys"
  })
})

export const ApiKeysApi = HttpApiGroup.make("apiKeys")
  .annotate(OpenApi.Description, "API keys of the caller's organization. Managing keys needs a session token.")
  .add(
    HttpApiEndpoint.post("create", "/")
      .annotate(OpenApi.Summary, "Create an API key")
      .annotate(
        OpenApi.Description,
        "Creates a key limited to the given scopes (every scope when omitted). The key itself is in this response only; afterwards only its prefix is shown."
      )
      .setPayload(CreateApiKeyRequest)
      .addSuccess(CreateApiKeyResponse)
  )
  .add(
    HttpApiEndpoint.get("list", "/")
      .annotate(OpenApi.Summary, "List API keys")
      .annotate(
        OpenApi.Description,
        "The organization's keys, oldest first, without the keys themselves. Revoked keys are listed only with `include_archived=true`."
      )
      .setUrlParams(ApiKeyListQuery)
      .addSuccess(Schema.Array(ApiKeyResponse))
  )
  .add(
    HttpApiEndpoint.del("revoke", "/:id")
      .annotate(OpenApi.Summary, "Revoke an API key")
      .annotate(
        OpenApi.Description,
        "Revokes a key: requests made with it are refused at once. A revoked key can be reactivated."
      )
      .setPath(ApiKeyPath)
      .addSuccess(ApiKeyResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.put("reactivate", "/:id/reactivate")
      .annotate(OpenApi.Summary, "Reactivate an API key")
      .annotate(OpenApi.Description, "Lets a revoked key authenticate again.")
      .setPath(ApiKeyPath)
      .addSuccess(ApiKeyResponse)
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/user/api-keys")
