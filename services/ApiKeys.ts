import { Context, type Effect } from "effect"
import type { Forbidden, NotFound } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { Scope } from "../src/domain/scopes.ts"

export interface ApiKeyView {
  readonly id: number
  readonly name: string
  /** The user the key acts as. */
  readonly created_by: number
  readonly key_prefix: string
  readonly scopes: ReadonlyArray<Scope>
  readonly is_active: boolean
  readonly created_at: Date
  readonly last_used_at: Date | null
  readonly revoked_at: Date | null
}

export interface CreatedApiKey {
  readonly id: number
  readonly name: string
  readonly key_prefix: string
  /** The only time the key itself is shown. */
  readonly api_key: string
  readonly scopes: ReadonlyArray<Scope>
  readonly created_at: Date
}

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
