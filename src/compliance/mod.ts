export * from "./callingHours.ts"
export * from "./doNotCallEntry.ts"
export * from "./recipientZones.ts"
