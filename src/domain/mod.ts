export * from "./errors.ts"
export * from "./principal.ts"
export * from "./scopes.ts"
export * from "./roles.ts"
