import { Context, type Effect, type Option } from "effect"
import type { Conflict, NotFound, ValidationFailed } from "../src/domain/errors.ts"
import type { OrganizationId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { Credential, CredentialData, CredentialType } from "../src/tools/credentialRecord.ts"

export interface CredentialInput {
  readonly name: string
  readonly description?: string | null | undefined
  readonly credential_type: CredentialType
  readonly credential_data: Readonly<Record<string, unknown>>
  /** The one host its secrets may be sent to; bound at the first tool that uses it when omitted. */
  readonly host?: string | null | undefined
}

export interface CredentialUpdate {
  readonly name?: string | undefined
  readonly description?: string | null | undefined
  readonly credential_type?: CredentialType | undefined
  /** Secret fields sent back masked keep their stored value (while the type and host stay the same). */
  readonly credential_data?: Readonly<Record<string, unknown>> | undefined
  readonly host?: string | null | undefined
}

/** A credential ready to put on a request: decrypted, for the tool runner only (never a response). */
export interface CredentialForRequest {
  readonly id: number
  readonly uuid: string
  readonly type: CredentialType
  readonly data: CredentialData
  readonly boundHost: string | null
}

/**
 * An organization's stored credentials for tools (Dograh's `/api/v1/credentials`): encrypted at
 * rest, shown masked, each bound to one host (a stored credential never follows a changed host).
 */
export interface CredentialsShape {
  readonly list: (principal: Principal) => Effect.Effect<ReadonlyArray<Credential>>
  readonly get: (principal: Principal, uuid: string) => Effect.Effect<Credential, NotFound>
  readonly create: (
    principal: Principal,
    input: CredentialInput
  ) => Effect.Effect<Credential, Conflict | ValidationFailed>
  readonly update: (
    principal: Principal,
    uuid: string,
    input: CredentialUpdate
  ) => Effect.Effect<Credential, NotFound | Conflict | ValidationFailed>
  /** Refused (Conflict) while a tool uses it. */
  readonly remove: (principal: Principal, uuid: string) => Effect.Effect<void, NotFound | Conflict>
  /** The credential, decrypted, when it is the organization's. */
  readonly forRequest: (
    organizationId: OrganizationId,
    uuid: string
  ) => Effect.Effect<Option.Option<CredentialForRequest>>
  /**
   * Binds an unbound credential to `host`; answers whether it is now bound there (false: it is
   * bound to another host, and must not be sent to this one).
   */
  readonly bind: (organizationId: OrganizationId, id: number, host: string) => Effect.Effect<boolean>
}

export class Credentials extends Context.Tag("talkgraph/Credentials")<Credentials, CredentialsShape>() {}
