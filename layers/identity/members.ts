import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { ApiKeyVerifications } from "../../services/ApiKeyVerifications.ts"
import { Members, type MemberView, type NewMember } from "../../services/Members.ts"
import { PasswordHashing } from "../../services/PasswordHashing.ts"
import { Conflict, Forbidden, NotFound } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import {
  type Actor,
  addMemberRefusal,
  type Refusal,
  removalRefusal,
  type Role,
  roleChangeRefusal
} from "../../src/domain/roles.ts"
import { insertUserRows, prepareNewUser } from "./userRows.ts"

const refused = (refusal: Refusal) =>
  refusal.kind === "forbidden"
    ? new Forbidden({ message: refusal.message })
    : new Conflict({ message: refusal.message })

const refuseIf = (refusal: Refusal | undefined) => (refusal ? Effect.fail(refused(refusal)) : Effect.void)

export const MembersLive = Layer.effect(
  Members,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const hashing = yield* PasswordHashing
    const verifications = yield* ApiKeyVerifications

    const memberRows = (organizationId: number, userId: number | null) =>
      sql<MemberView>`
        SELECT m.user_id, u.email, u.name, m.role, m.created_at AS joined_at
        FROM memberships m JOIN users u ON u.id = m.user_id
        WHERE m.organization_id = ${organizationId} AND (${userId}::bigint IS NULL OR m.user_id = ${userId}::bigint)
        ORDER BY m.created_at, m.user_id`

    /**
     * Takes the organization's row lock, then reads the caller's role as it is now: decisions
     * about members are made one at a time per organization, each against current roles. (A
     * statement after the lock sees what committed before it; `NO KEY UPDATE` leaves inserts
     * that reference the organization free to go on.)
     */
    const lockedActor = (principal: Principal) =>
      Effect.gen(function*() {
        yield* sql`SELECT 1 FROM organizations WHERE id = ${principal.organizationId} FOR NO KEY UPDATE`
        const [row] = yield* sql<{ role: Role }>`
          SELECT role FROM memberships WHERE organization_id = ${principal.organizationId} AND user_id = ${principal.userId}`
        if (!row) return yield* new Forbidden({ message: "You are no longer a member of this organization" })
        const actor: Actor = { userId: principal.userId, role: row.role }
        return actor
      })

    const ownerCount = (organizationId: number) =>
      Effect.map(
        sql<{ owners: number }>`
          SELECT count(*)::int AS owners FROM memberships WHERE organization_id = ${organizationId} AND role = 'owner'`,
        ([row]) => row!.owners
      )

    const lockedTarget = (principal: Principal, userId: number) =>
      Effect.gen(function*() {
        const actor = yield* lockedActor(principal)
        const [target] = yield* memberRows(principal.organizationId, userId)
        if (!target) return yield* new NotFound({ resource: "Member", id: userId })
        return { actor, target, owners: yield* ownerCount(principal.organizationId) }
      })

    const list = Effect.fn("Members.list")(function*(principal: Principal) {
      return yield* memberRows(principal.organizationId, null)
    }, Effect.orDie)

    const add = Effect.fn("Members.add")(function*(principal: Principal, member: NewMember) {
      // Refused before the costly hash when the caller's role already says no; decided again below.
      yield* refuseIf(addMemberRefusal(principal, member.role))
      const prepared = yield* prepareNewUser(sql, hashing, member.email, member.password)
      return yield* sql.withTransaction(Effect.gen(function*() {
        const actor = yield* lockedActor(principal)
        yield* refuseIf(addMemberRefusal(actor, member.role))
        const user = yield* insertUserRows(sql, {
          ...prepared,
          name: member.name,
          organizationId: principal.organizationId,
          role: member.role
        })
        const [view] = yield* memberRows(principal.organizationId, user.id)
        return view!
      }))
    }, Effect.catchTags({ SqlError: Effect.die, NotFound: Effect.die }))

    const changeRole = Effect.fn("Members.changeRole")(function*(principal: Principal, userId: number, role: Role) {
      const view = yield* sql.withTransaction(Effect.gen(function*() {
        const { actor, target, owners } = yield* lockedTarget(principal, userId)
        yield* refuseIf(roleChangeRefusal(actor, { userId, role: target.role }, role, owners))
        yield* sql`
          UPDATE memberships SET role = ${role} WHERE organization_id = ${principal.organizationId} AND user_id = ${userId}`
        return { ...target, role }
      }))
      // Their keys act with their role: no verification made under the old one may be reused.
      yield* verifications.forgetUser(userId)
      return view
    }, Effect.catchTag("SqlError", Effect.die))

    const remove = Effect.fn("Members.remove")(function*(principal: Principal, userId: number) {
      yield* sql.withTransaction(Effect.gen(function*() {
        const { actor, target, owners } = yield* lockedTarget(principal, userId)
        yield* refuseIf(removalRefusal(actor, { userId, role: target.role }, owners))
        const organizationId = principal.organizationId
        yield* sql`DELETE FROM memberships WHERE organization_id = ${organizationId} AND user_id = ${userId}`
        yield* sql`
          UPDATE sessions SET revoked_at = now()
          WHERE organization_id = ${organizationId} AND user_id = ${userId} AND revoked_at IS NULL`
        yield* sql`
          UPDATE api_keys SET revoked_at = now(), revoked_by = ${principal.userId}
          WHERE organization_id = ${organizationId} AND created_by = ${userId} AND revoked_at IS NULL`
        yield* sql`
          DELETE FROM users u WHERE u.id = ${userId} AND NOT EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id)`
      }))
      yield* verifications.forgetUser(userId)
    }, Effect.catchTag("SqlError", Effect.die))

    return Members.of({ list, add, changeRole, remove })
  })
)
