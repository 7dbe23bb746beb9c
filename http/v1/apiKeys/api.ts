import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { Scope } from "../../../src/domain/scopes.ts"
import { HttpForbidden, HttpNotFound } from "../../errors.ts"
import { bodySchema, IdFromPath, pathSchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

export const CreateApiKeyRequest = bodySchema("CreateApiKey", {
  name: Schema.String.pipe(Schema.trimmed({ message: () => "Name must not start or end with spaces" }), Schema.minLength(1), Schema.maxLength(100)),
  scopes: Schema.optional(Schema.Array(Scope).pipe(Schema.minItems(1)))
})

export const CreateApiKeyResponse = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  key_prefix: Schema.String,
  api_key: Schema.String,
  scopes: Schema.Array(Scope),
  created_at: Schema.Date
}).annotations({ identifier: "CreateAPIKeyResponse" })

export const ApiKeyResponse = Schema.Struct({
  id: Schema.Number,
  name: Schema.String,
  created_by: Schema.Number.annotations({ description: "The user the key acts as, with that user's current role" }),
  key_prefix: Schema.String,
  scopes: Schema.Array(Scope),
  is_active: Schema.Boolean,
  created_at: Schema.Date,
  last_used_at: Schema.NullOr(Schema.Date),
  revoked_at: Schema.NullOr(Schema.Date)
}).annotations({ identifier: "APIKeyResponse" })

const ApiKeyPath = pathSchema("ApiKey", { id: IdFromPath })

export const ApiKeysApi = HttpApiGroup.make("apiKeys")
  .add(
    HttpApiEndpoint.post("create", "/")
      .setPayload(CreateApiKeyRequest)
      .addSuccess(CreateApiKeyResponse)
  )
  .add(HttpApiEndpoint.get("list", "/").addSuccess(Schema.Array(ApiKeyResponse)))
  .add(HttpApiEndpoint.del("revoke", "/:id").setPath(ApiKeyPath).addSuccess(ApiKeyResponse).addError(HttpNotFound))
  .add(
    HttpApiEndpoint.put("reactivate", "/:id/reactivate").setPath(ApiKeyPath).addSuccess(ApiKeyResponse).addError(
      HttpNotFound
    )
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/user/api-keys")
