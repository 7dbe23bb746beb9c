import { Schema } from "effect"
import { Scope } from "../domain/scopes.ts"
import { Timestamp } from "../domain/wireTypes.ts"

/**
 * An API key as listed, without the key itself (APIKeyResponse). The one definition: ApiKeys'
 * view is its type and the HTTP response its encoding.
 */
export const ApiKey = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  created_by: Schema.Number.annotations({ description: "The user the key acts as, with that user's current role" }),
  key_prefix: Schema.String,
  scopes: Schema.Array(Scope),
  is_active: Schema.Boolean,
  created_at: Timestamp,
  last_used_at: Schema.NullOr(Timestamp),
  revoked_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "APIKeyResponse" })
export type ApiKey = typeof ApiKey.Type

/** A key just created (CreateAPIKeyResponse): the only time the key itself is shown. */
export const CreatedApiKey = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  key_prefix: Schema.String,
  api_key: Schema.String,
  scopes: Schema.Array(Scope),
  created_at: Timestamp
}).annotations({ identifier: "CreateAPIKeyResponse" })
export type CreatedApiKey = typeof CreatedApiKey.Type
