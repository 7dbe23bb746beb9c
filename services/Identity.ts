import { Context, type Effect } from "effect"
import type {
  Conflict,
  Forbidden,
  NotFound,
  TooManyRequests,
  Unauthenticated,
  ValidationFailed
} from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { Role } from "../src/domain/roles.ts"

export interface UserView {
  readonly id: number
  readonly email: string
  readonly name: string
  readonly organization_id: number
}

/** The caller as `GET /auth/me` shows them: the user, their organization's name and their role in it. */
export interface MeView extends UserView {
  readonly organization_name: string
  readonly role: Role
}

export interface SessionGrant {
  readonly token: string
  readonly expires_at: Date
  readonly user: UserView
}

export interface NewUser {
  readonly email: string
  readonly password: string
  readonly name: string
  /** Joins this organization; without it a new organization named after the user is created. */
  readonly organizationId?: number | undefined
  /** Their role there: by default owner of a new organization, member of an existing one. */
  readonly role?: Role | undefined
}

/** Users, organizations, sessions and the resolution of a request's credentials to a principal. */
export interface IdentityShape {
  readonly login: (email: string, password: string) => Effect.Effect<SessionGrant, Unauthenticated | TooManyRequests>
  readonly logout: (principal: Principal) => Effect.Effect<void>
  /** Open signup: a new user in a new organization, which they own. */
  readonly signup: (
    user: NewUser
  ) => Effect.Effect<SessionGrant, Forbidden | Conflict | ValidationFailed | TooManyRequests>
  /** The operator's way in (`talkgraph user create`): no caller to authorize. */
  readonly createUser: (
    user: NewUser
  ) => Effect.Effect<UserView, Conflict | NotFound | ValidationFailed | TooManyRequests>
  readonly me: (principal: Principal) => Effect.Effect<MeView, Unauthenticated>
  /** A bearer value (session token or API key) or an X-API-Key value to the caller it identifies. */
  readonly authenticate: (
    credential: string,
    accepts: "sessionOrKey" | "keyOnly"
  ) => Effect.Effect<Principal, Unauthenticated | Forbidden>
  /** First start: creates the configured (or a generated) admin when there are no users. */
  readonly bootstrapAdmin: Effect.Effect<void>
}

export class Identity extends Context.Tag("talkgraph/Identity")<Identity, IdentityShape>() {}
