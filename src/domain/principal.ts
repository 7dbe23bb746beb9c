import type { Scope } from "./scopes.ts"

/** Who is calling: a user acting in one organization, through a session or an API key. */
export interface Principal {
  readonly userId: number
  readonly organizationId: number
  readonly via: "session" | "apiKey"
  readonly sessionId: number | null
  readonly apiKeyId: number | null
  readonly scopes: ReadonlyArray<Scope>
}

export const hasScope = (principal: Principal, scope: Scope): boolean => principal.scopes.includes(scope)
