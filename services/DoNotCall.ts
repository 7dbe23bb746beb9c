import { Context, type Effect, type Stream } from "effect"
import type { DoNotCallEntry, DoNotCallSource } from "../src/compliance/doNotCallEntry.ts"
import type { Conflict, NotFound, ValidationFailed } from "../src/domain/errors.ts"
import type { OrganizationId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"

export interface DoNotCallInput {
  readonly phone_number: string
  readonly reason?: string | null | undefined
  /** How a number written without `+` is read (e.g. "US"). */
  readonly default_region?: string | undefined
}

export interface DoNotCallQuery {
  readonly page: number
  readonly limit: number
  /** Digits the number contains. */
  readonly search?: string | undefined
}

export interface DoNotCallImport {
  readonly imported: number
  /** Rows whose number was on the list already (or repeated in the file). */
  readonly already_listed: number
  readonly warnings: ReadonlyArray<string>
}

/**
 * An organization's do-not-call list. Every read and write is scoped to the caller's organization;
 * the dialer's claim and single calls consult the same table, so a number added here is not
 * dialled afterwards by any process.
 */
export interface DoNotCallShape {
  readonly add: (principal: Principal, input: DoNotCallInput) => Effect.Effect<DoNotCallEntry, ValidationFailed>
  /** In number order: the primary key's, the one index the list has (imports stay fast). */
  readonly list: (
    principal: Principal,
    query: DoNotCallQuery
  ) => Effect.Effect<{ readonly items: ReadonlyArray<DoNotCallEntry>; readonly total: number }>
  readonly remove: (principal: Principal, phoneNumber: string) => Effect.Effect<void, NotFound | ValidationFailed>
  /** A CSV uploaded through /api/v1/s3/presigned-upload-url, read with the contacts' CSV rules. */
  readonly importCsv: (
    principal: Principal,
    sourceId: string,
    defaultRegion: string | undefined
  ) => Effect.Effect<DoNotCallImport, ValidationFailed | Conflict>
  /** The whole list as CSV (phone_number, reason, source, created_at), streamed. */
  readonly exportCsv: (principal: Principal) => Stream.Stream<string>
  /**
   * Adds a number on the organization's behalf (the agent's tool): true when it is new to the list;
   * a number listed already keeps its first reason and source.
   */
  readonly record: (
    organizationId: OrganizationId,
    phoneNumber: string,
    source: DoNotCallSource,
    reason: string | null
  ) => Effect.Effect<boolean>
}

export class DoNotCall extends Context.Tag("talkgraph/DoNotCall")<DoNotCall, DoNotCallShape>() {}
