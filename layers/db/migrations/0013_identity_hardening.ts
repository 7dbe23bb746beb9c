import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const identityHardening = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // The throttle now counts attempts as they are admitted, before their password is checked.
  yield* sql`ALTER TABLE login_failures RENAME TO login_attempts`
  yield* sql`ALTER TABLE login_attempts RENAME COLUMN failures TO attempts`
  // Who revoked a key decides who may reactivate it (a member cannot undo an admin's revocation).
  yield* sql`ALTER TABLE api_keys ADD COLUMN revoked_by bigint REFERENCES users (id) ON DELETE SET NULL`
})
