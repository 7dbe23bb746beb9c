import { SqlClient } from "@effect/sql"
import { Clock, Console, Effect, Layer, Option, Redacted } from "effect"
import * as crypto from "node:crypto"
import * as os from "node:os"
import { AppConfig } from "../../services/AppConfig.ts"
import { Identity, type NewUser, type UserView } from "../../services/Identity.ts"
import { PasswordHashing } from "../../services/PasswordHashing.ts"
import { SecretBox } from "../../services/SecretBox.ts"
import { Forbidden, TooManyRequests, Unauthenticated } from "../../src/domain/errors.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import type { Role } from "../../src/domain/roles.ts"
import { allScopes, type Scope } from "../../src/domain/scopes.ts"
import {
  DECOY_HASH,
  defaultThrottlePolicy,
  isApiKey,
  isSessionToken,
  newSessionToken,
  passwordHashingConcurrency
} from "../../src/identity/mod.ts"
import { makeBoundedGate } from "./boundedGate.ts"
import { admitLoginAttempt, clearLoginAttempts } from "./loginAttempts.ts"
import { insertUserRows, prepareNewUser } from "./userRows.ts"

const BOOTSTRAP_LOCK_KEY = 7_402_193_002
/** `last_used_at` is informational: write it at most once a minute per key, not on every request. */
const LAST_USED_WRITE_INTERVAL_MS = 60_000

const normalizeEmail = (email: string) => email.trim().toLowerCase()

/** Twice the password checks that may run at once: one login's statements overlap another's check. */
const LOGIN_CONCURRENCY = 2 * passwordHashingConcurrency(os.availableParallelism())
const MAX_LOGINS_WAITING = 256

interface UserRow {
  readonly id: number
  readonly email: string
  readonly name: string
  readonly password_hash: string
}

export const IdentityLive = Layer.effect(
  Identity,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const secrets = yield* SecretBox
    const config = yield* AppConfig
    const hashing = yield* PasswordHashing
    const lastUsedWrites = new Map<number, number>()

    const userView = (user: { id: number; email: string; name: string }, organizationId: number): UserView => ({
      id: user.id,
      email: user.email,
      name: user.name,
      organization_id: organizationId
    })

    const primaryOrganization = (userId: number) =>
      sql<{ organization_id: number }>`
        SELECT organization_id FROM memberships WHERE user_id = ${userId} ORDER BY created_at, organization_id LIMIT 1`
        .pipe(
          Effect.map((rows) => Option.fromNullable(rows[0]?.organization_id))
        )

    const openSession = (user: UserRow | { id: number; email: string; name: string }, organizationId: number) =>
      Effect.gen(function*() {
        const token = newSessionToken()
        const now = yield* Clock.currentTimeMillis
        const expiresAt = new Date(now + config.sessionTtlHours * 3_600_000)
        yield* sql`
          INSERT INTO sessions (user_id, organization_id, token_hash, expires_at)
          VALUES (${user.id}, ${organizationId}, ${secrets.tokenHash(token)}, ${expiresAt})`
        return { token, expires_at: expiresAt, user: userView(user, organizationId) }
      })

    const loginSlots = yield* makeBoundedGate(LOGIN_CONCURRENCY, MAX_LOGINS_WAITING)
    const loginsBusy = new TooManyRequests({
      message: "Too many logins are in progress; try again in a moment",
      retryAfterSeconds: 1
    })

    const attemptLogin = (email: string, password: string) =>
      Effect.gen(function*() {
        const emailKey = normalizeEmail(email)
        const admission = yield* admitLoginAttempt(
          sql,
          emailKey,
          new Date(yield* Clock.currentTimeMillis),
          defaultThrottlePolicy
        )
        if (!admission.admitted) {
          return yield* new TooManyRequests({
            message: `Too many failed logins for this account; try again in ${admission.retryAfterSeconds} seconds`,
            retryAfterSeconds: admission.retryAfterSeconds
          })
        }
        const rows = yield* sql<
          UserRow
        >`SELECT id, email, name, password_hash FROM users WHERE lower(email) = ${emailKey}`
        const user = rows[0]
        const valid = yield* hashing.verify(user?.password_hash ?? DECOY_HASH, password)
        const organizationId = user && valid ? yield* primaryOrganization(user.id) : Option.none()
        if (!user || !valid || Option.isNone(organizationId)) {
          return yield* new Unauthenticated({ message: "Incorrect email or password" })
        }
        yield* clearLoginAttempts(sql, emailKey)
        return yield* openSession(user, organizationId.value)
      })

    /**
     * A few logins at a time, each through its statements and its password check: a burst waits
     * here, in memory, instead of in front of the database, where it would hold up every other
     * request (the embedded database has one connection).
     */
    const login = Effect.fn("Identity.login")(function*(email: string, password: string) {
      return yield* loginSlots(attemptLogin(email, password), loginsBusy)
    }, Effect.catchTag("SqlError", Effect.die))

    const logout = Effect.fn("Identity.logout")(function*(principal: Principal) {
      if (principal.sessionId !== null) {
        yield* sql`UPDATE sessions SET revoked_at = now() WHERE id = ${principal.sessionId} AND revoked_at IS NULL`
      }
    }, Effect.catchTag("SqlError", Effect.die))

    const insertUser = (user: NewUser) =>
      Effect.gen(function*() {
        const prepared = yield* prepareNewUser(sql, hashing, user.email, user.password)
        return yield* sql.withTransaction(insertUserRows(sql, {
          ...prepared,
          name: user.name,
          organizationId: user.organizationId,
          role: user.role ?? (user.organizationId === undefined ? "owner" : "member")
        }))
      })

    const createUser = Effect.fn("Identity.createUser")(function*(user: NewUser) {
      return yield* insertUser(user)
    }, Effect.catchTag("SqlError", Effect.die))

    const signup = Effect.fn("Identity.signup")(function*(user: NewUser) {
      if (!config.signupOpen) {
        return yield* new Forbidden({ message: "Signup is closed on this server; ask an administrator for an account" })
      }
      const created = yield* insertUser({ email: user.email, password: user.password, name: user.name }).pipe(
        // No organization is named, so none can be missing.
        Effect.catchTag("NotFound", Effect.die)
      )
      return yield* openSession(created, created.organization_id)
    }, Effect.catchTag("SqlError", Effect.die))

    const me = Effect.fn("Identity.me")(function*(principal: Principal) {
      const rows = yield* sql<{ id: number; email: string; name: string; organization_name: string }>`
        SELECT u.id, u.email, u.name, o.name AS organization_name
        FROM users u, organizations o
        WHERE u.id = ${principal.userId} AND o.id = ${principal.organizationId}`
      const user = rows[0]
      if (!user) return yield* new Unauthenticated({ message: "This account no longer exists" })
      return {
        ...userView(user, principal.organizationId),
        organization_name: user.organization_name,
        role: principal.role
      }
    }, Effect.catchTag("SqlError", Effect.die))

    const touchApiKey = (id: number, now: number) => {
      const last = lastUsedWrites.get(id)
      if (last !== undefined && now - last < LAST_USED_WRITE_INTERVAL_MS) return Effect.void
      lastUsedWrites.set(id, now)
      return sql`UPDATE api_keys SET last_used_at = now() WHERE id = ${id}`.pipe(Effect.asVoid)
    }

    const authenticateApiKey = (key: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{
          id: number
          organization_id: OrganizationId
          created_by: number
          scopes: Array<Scope> | null
          revoked_at: Date | null
          role: Role | null
        }>`
          SELECT k.id, k.organization_id, k.created_by, k.scopes, k.revoked_at, m.role
          FROM api_keys k
          LEFT JOIN memberships m ON m.user_id = k.created_by AND m.organization_id = k.organization_id
          WHERE k.key_hash = ${secrets.tokenHash(key)}`
        const row = rows[0]
        if (!row || row.revoked_at !== null) {
          return yield* new Unauthenticated({ message: "Invalid or revoked API key" })
        }
        if (row.role === null) {
          return yield* new Forbidden({
            message: "The user who created this API key is no longer a member of its organization"
          })
        }
        yield* touchApiKey(row.id, yield* Clock.currentTimeMillis)
        const principal: Principal = {
          userId: row.created_by,
          organizationId: row.organization_id,
          role: row.role,
          via: "apiKey",
          sessionId: null,
          apiKeyId: row.id,
          scopes: row.scopes ?? allScopes
        }
        return principal
      })

    const authenticateSession = (token: string) =>
      Effect.gen(function*() {
        const rows = yield* sql<{ id: number; user_id: number; organization_id: OrganizationId; role: Role }>`
          SELECT s.id, s.user_id, s.organization_id, m.role
          FROM sessions s
          JOIN memberships m ON m.user_id = s.user_id AND m.organization_id = s.organization_id
          WHERE s.token_hash = ${secrets.tokenHash(token)} AND s.revoked_at IS NULL AND s.expires_at > now()`
        const row = rows[0]
        if (!row) {
          return yield* new Unauthenticated({ message: "Session expired or signed out; log in again" })
        }
        const principal: Principal = {
          userId: row.user_id,
          organizationId: row.organization_id,
          role: row.role,
          via: "session",
          sessionId: row.id,
          apiKeyId: null,
          scopes: allScopes
        }
        return principal
      })

    const authenticate = Effect.fn("Identity.authenticate")(function*(
      credential: string,
      accepts: "sessionOrKey" | "keyOnly"
    ) {
      const value = credential.trim()
      if (value === "") {
        return yield* new Unauthenticated({
          message: accepts === "keyOnly"
            ? "Missing API key: send X-API-Key or Authorization: Bearer <API key>"
            : "Not authenticated: send X-API-Key or Authorization: Bearer <token>"
        })
      }
      if (isApiKey(value)) return yield* authenticateApiKey(value)
      if (isSessionToken(value)) {
        if (accepts === "keyOnly") {
          return yield* new Unauthenticated({ message: "This endpoint requires an API key, not a session token" })
        }
        return yield* authenticateSession(value)
      }
      return yield* new Unauthenticated({ message: "Invalid credentials" })
    }, Effect.catchTag("SqlError", Effect.die))

    const bootstrapAdmin = sql.withTransaction(Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${BOOTSTRAP_LOCK_KEY})`
      const [{ count }] = (yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM users`) as [
        { count: number }
      ]
      if (count > 0) return
      const email = Option.getOrElse(config.adminEmail, () => "admin@talkgraph.local")
      const generated = Option.isNone(config.adminPassword)
      const password = Option.match(config.adminPassword, {
        onNone: () => crypto.randomBytes(12).toString("base64url"),
        onSome: Redacted.value
      })
      yield* insertUser({ email, password, name: "Admin" })
      if (generated) {
        // Printed once on purpose, to the console rather than the log stream: there is no other way to learn it.
        yield* Console.error(
          `\n  talkgraph: created the first admin user\n    email:    ${email}\n    password: ${password}\n` +
            `  Keep it now; it is not shown again (set TALKGRAPH_ADMIN_EMAIL/PASSWORD to choose your own).\n`
        )
      } else {
        yield* Effect.logInfo("Created the first admin user").pipe(Effect.annotateLogs("email", email))
      }
    })).pipe(Effect.orDie, Effect.withSpan("Identity.bootstrapAdmin"))

    return Identity.of({ login, logout, signup, createUser, me, authenticate, bootstrapAdmin })
  })
)
