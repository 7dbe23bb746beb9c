import { Context, type Effect } from "effect"
import type { Principal } from "../src/domain/principal.ts"

/**
 * API keys verified in the last second, so a busy key (a chat backend sending every user's
 * messages) costs one database lookup a second instead of one per request. Revoking a key through
 * this process forgets it at once; a revocation made through another process takes effect here
 * within that second; so does a change of the key creator's role or membership.
 */
export interface ApiKeyVerificationsShape {
  /** The principal `verify` resolves `apiKey` to, reusing a recent success. Failures are never kept. */
  readonly verified: <E>(apiKey: string, verify: Effect.Effect<Principal, E>) => Effect.Effect<Principal, E>
  /** Forgets every verification of the key `apiKeyId`: called once its revocation is stored. */
  readonly forget: (apiKeyId: number) => Effect.Effect<void>
  /** Forgets every verification of keys acting as `userId`: called once their role or membership changed. */
  readonly forgetUser: (userId: number) => Effect.Effect<void>
}

export class ApiKeyVerifications extends Context.Tag("talkgraph/ApiKeyVerifications")<
  ApiKeyVerifications,
  ApiKeyVerificationsShape
>() {}
