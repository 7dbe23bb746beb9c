import type { OrganizationId } from "./ids.ts"
import type { Actor, Role } from "./roles.ts"
import type { Scope } from "./scopes.ts"

/**
 * Who is calling: a user acting in one organization, through a session or an API key. An API
 * key acts with its creator's role as it is now, and only within its scopes.
 */
export interface Principal extends Actor {
  readonly userId: number
  readonly organizationId: OrganizationId
  readonly role: Role
  readonly via: "session" | "apiKey"
  readonly sessionId: number | null
  readonly apiKeyId: number | null
  readonly scopes: ReadonlyArray<Scope>
}

export const hasScope = (principal: Principal, scope: Scope): boolean => principal.scopes.includes(scope)
