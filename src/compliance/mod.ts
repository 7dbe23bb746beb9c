export * from "./doNotCallEntry.ts"
