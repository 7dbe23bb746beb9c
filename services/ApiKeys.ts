import { Context, type Effect } from "effect"
import type { Forbidden, NotFound } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { Scope } from "../src/domain/scopes.ts"
import type { ApiKey, CreatedApiKey } from "../src/identity/apiKeyRecord.ts"

/** An API key and a created key are defined once, in src/identity/apiKeyRecord.ts. */
export type ApiKeyView = ApiKey
export type { CreatedApiKey }

/**
 * An organization's API keys; every operation is scoped to the caller's organization. Members see
 * and manage their own keys; admins and owners every key (`src/domain/roles.ts` has the rules).
 */
export interface ApiKeysShape {
  readonly create: (
    principal: Principal,
    input: { readonly name: string; readonly scopes?: ReadonlyArray<Scope> | undefined }
  ) => Effect.Effect<CreatedApiKey>
  /** Revoked keys are listed only with `includeArchived`. */
  readonly list: (
    principal: Principal,
    options: { readonly includeArchived: boolean }
  ) => Effect.Effect<ReadonlyArray<ApiKeyView>>
  readonly revoke: (principal: Principal, id: number) => Effect.Effect<ApiKeyView, NotFound | Forbidden>
  readonly reactivate: (principal: Principal, id: number) => Effect.Effect<ApiKeyView, NotFound | Forbidden>
}

export class ApiKeys extends Context.Tag("talkgraph/ApiKeys")<ApiKeys, ApiKeysShape>() {}
