import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Scope } from "../../../src/domain/scopes.ts"
import { HttpForbidden, HttpNotFound } from "../../errors.ts"
import { bodySchema, BooleanFromQuery, IdFromPath, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"
import { Timestamp } from "../../../src/domain/wireTypes.ts"

export const CreateApiKeyRequest = bodySchema("CreateApiKey", {
  name: Schema.String.pipe(Schema.trimmed({ message: () => "Name must not start or end with spaces" }), Schema.minLength(1), Schema.maxLength(100)),
  scopes: Schema.optional(Schema.Array(Scope).pipe(Schema.minItems(1)))
})

export const CreateApiKeyResponse = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  key_prefix: Schema.String,
  api_key: Schema.String,
  scopes: Schema.Array(Scope),
  created_at: Timestamp
}).annotations({ identifier: "CreateAPIKeyResponse" })

export const ApiKeyResponse = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  key_prefix: Schema.String,
  scopes: Schema.Array(Scope),
  is_active: Schema.Boolean,
  created_at: Timestamp,
  last_used_at: Schema.NullOr(Timestamp),
  revoked_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "APIKeyResponse" })

const ApiKeyPath = pathSchema("ApiKey", { id: IdFromPath })

export const ApiKeyListQuery = querySchema("ApiKeyList", {
  include_archived: Schema.optionalWith(BooleanFromQuery, { default: () => false }).annotations({
    description: "Also list revoked keys"
  })
})

export const ApiKeysApi = HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(CreateApiKeyRequest)
      .addSuccess(CreateApiKeyResponse)
  )
  .add(HttpApiEndpoint.get("list", "/").setUrlParams(ApiKeyListQuery).addSuccess(Schema.Array(ApiKeyResponse)))
  .add(HttpApiEndpoint.del("revoke", "/:id").setPath(ApiKeyPath).addSuccess(ApiKeyResponse).addError(HttpNotFound))
  .add(
    HttpApiEndpoint.put("reactivate", "/:id/reactivate").setPath(ApiKeyPath).addSuccess(ApiKeyResponse).addError(
      HttpNotFound
    )
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/user/api-keys")
