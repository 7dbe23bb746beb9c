import { Context, type Effect } from "effect"
import type { Conflict, Forbidden, NotFound, TooManyRequests, ValidationFailed } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { Role } from "../src/domain/roles.ts"

export interface MemberView {
  readonly user_id: number
  readonly email: string
  readonly name: string
  readonly role: Role
  readonly joined_at: Date
}

export interface NewMember {
  readonly email: string
  readonly password: string
  readonly name: string
  readonly role: Role
}

/**
 * The members of the caller's organization. Who may do what is `src/domain/roles.ts`; each change
 * is decided under the organization's row lock against everyone's roles as they are then, so two
 * owners demoting each other at once cannot leave the organization without one.
 */
export interface MembersShape {
  readonly list: (principal: Principal) => Effect.Effect<ReadonlyArray<MemberView>>
  /** Creates the member's account, with the password the caller chose for them. */
  readonly add: (
    principal: Principal,
    member: NewMember
  ) => Effect.Effect<MemberView, Forbidden | Conflict | ValidationFailed | TooManyRequests>
  readonly changeRole: (
    principal: Principal,
    userId: number,
    role: Role
  ) => Effect.Effect<MemberView, Forbidden | Conflict | NotFound>
  /**
   * Ends the membership: the member's sessions and API keys in the organization are revoked at
   * once. An account left in no organization is deleted, so its email can be used again.
   */
  readonly remove: (principal: Principal, userId: number) => Effect.Effect<void, Forbidden | Conflict | NotFound>
}

export class Members extends Context.Tag("talkgraph/Members")<Members, MembersShape>() {}
