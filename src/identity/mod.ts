export * from "./credentials.ts"
export * from "./loginThrottle.ts"
export * from "./passwords.ts"
export * from "./tokens.ts"
