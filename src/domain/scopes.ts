import { Schema } from "effect"

/** What an API key may do. A key created without scopes may do everything. */
export const Scope = Schema.Literal(
  "agents:read",
  "agents:write",
  "conversations:read",
  "campaigns:read",
  "campaigns:write",
  "telephony:write",
  "usage:read",
  "calls:read",
  "calls:write",
  "webhooks:write",
  "tests:read",
  "tests:write",
  "knowledge:read",
  "knowledge:write"
)
export type Scope = typeof Scope.Type

export const allScopes: ReadonlyArray<Scope> = Scope.literals
