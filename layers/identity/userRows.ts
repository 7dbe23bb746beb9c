import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { UserView } from "../../services/Identity.ts"
import type { PasswordHashingShape } from "../../services/PasswordHashing.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { Role } from "../../src/domain/roles.ts"
import { emailProblem, passwordProblem } from "../../src/identity/credentials.ts"

/** The shared rule for a new account's email and password, as a 422 naming each bad field. */
export const checkNewCredentials = (email: string, password: string) => {
  const emailIssue = emailProblem(email)
  const passwordIssue = passwordProblem(password)
  const problems = [
    ...(emailIssue ? [{ loc: ["body", "email"], msg: emailIssue, type: "value_error" }] : []),
    ...(passwordIssue ? [{ loc: ["body", "password"], msg: `Password ${passwordIssue}`, type: "value_error" }] : [])
  ]
  return problems.length === 0
    ? Effect.void
    : Effect.fail(new ValidationFailed({ message: problems.map((problem) => problem.msg).join("; "), problems }))
}

/**
 * Everything before storing a new user, outside any transaction: the shared rule, a cheap refusal
 * of a taken email (the unique index has the last word), and the costly hash.
 */
export const prepareNewUser = (
  sql: SqlClient.SqlClient,
  hashing: PasswordHashingShape,
  email: string,
  password: string
) =>
  Effect.gen(function*() {
    const trimmed = email.trim()
    yield* checkNewCredentials(trimmed, password)
    const taken = yield* sql`SELECT 1 FROM users WHERE lower(email) = ${trimmed.toLowerCase()}`
    if (taken.length > 0) return yield* new Conflict({ message: "A user with this email already exists" })
    return { email: trimmed, passwordHash: yield* hashing.hash(password) }
  })

interface UserRowsInput {
  readonly email: string
  readonly name: string
  readonly passwordHash: string
  /** Joins this organization; without it a new organization named after the user is created. */
  readonly organizationId?: number | undefined
  readonly role: Role
}

/**
 * Inserts a user and their membership, inside the caller's transaction. Hash the password before
 * opening it: a transaction held across argon2 would hold the embedded database's one connection.
 * Two signups for one email at once: the unique index decides, and the later one gets 409.
 */
export const insertUserRows = (sql: SqlClient.SqlClient, input: UserRowsInput) =>
  Effect.gen(function*() {
    if (input.organizationId !== undefined) {
      const known = yield* sql`SELECT 1 FROM organizations WHERE id = ${input.organizationId}`
      if (known.length === 0) return yield* new NotFound({ resource: "Organization", id: input.organizationId })
    }
    const [created] = yield* sql<{ id: number; email: string; name: string }>`
      INSERT INTO users (email, name, password_hash) VALUES (${input.email}, ${input.name}, ${input.passwordHash})
      ON CONFLICT ((lower(email))) DO NOTHING
      RETURNING id, email, name`
    if (!created) return yield* new Conflict({ message: "A user with this email already exists" })
    const organizationId = input.organizationId ?? (yield* sql<{ id: number }>`
      INSERT INTO organizations (name) VALUES (${input.name || input.email}) RETURNING id`)[0]!.id
    yield* sql`
      INSERT INTO memberships (user_id, organization_id, role) VALUES (${created.id}, ${organizationId}, ${input.role})`
    const view: UserView = { id: created.id, email: created.email, name: created.name, organization_id: organizationId }
    return view
  })
