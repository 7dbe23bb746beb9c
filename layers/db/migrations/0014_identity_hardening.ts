import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

export const identityHardening = Effect.gen(function* () {
  const sql = yield* SqlClient.SqlClient
  // The throttle now counts attempts as they are admitted, before their password is checked.
  yield* sql`ALTER TABLE login_failures RENAME TO login_attempts`
  yield* sql`ALTER TABLE login_attempts RENAME COLUMN failures TO attempts`
})
