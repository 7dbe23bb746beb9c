import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { retryAfterSeconds, type ThrottlePolicy } from "../../src/identity/loginThrottle.ts"

type Admission = { readonly admitted: true } | { readonly admitted: false; readonly retryAfterSeconds: number }

/**
 * Counts one login attempt for `emailKey` at `now` and decides it, in one statement: the upsert
 * holds the account's row lock, so concurrent attempts (in this process or another) are counted
 * one after the other and each sees the count the previous one left. Refused while locked, with
 * the row untouched; after an expired lock or window the count starts again at this attempt.
 * One statement rather than a transaction: on the embedded database every statement waits for
 * the one connection, and a burst of logins must not hold it longer than it has to.
 */
export const admitLoginAttempt = (sql: SqlClient.SqlClient, emailKey: string, now: Date, policy: ThrottlePolicy) => {
  const windowStart = new Date(now.getTime() - policy.windowSeconds * 1000)
  const lockEnd = new Date(now.getTime() + policy.lockSeconds * 1000)
  const startsAgain = sql`(a.locked_until IS NOT NULL OR a.window_started_at <= ${windowStart}::timestamptz)`
  const attempts = sql`CASE WHEN ${startsAgain} THEN 1 ELSE a.attempts + 1 END`
  return sql<{ admitted: boolean; locked_until: Date | null }>`
    WITH counted AS (
      INSERT INTO login_attempts AS a (email_key, attempts, window_started_at, locked_until)
      VALUES (${emailKey}, 1, ${now}::timestamptz, CASE WHEN 1 >= ${policy.maxFailures}::int THEN ${lockEnd}::timestamptz END)
      ON CONFLICT (email_key) DO UPDATE SET
        attempts = ${attempts},
        window_started_at = CASE WHEN ${startsAgain} THEN ${now}::timestamptz ELSE a.window_started_at END,
        locked_until = CASE WHEN ${attempts} >= ${policy.maxFailures}::int THEN ${lockEnd}::timestamptz END
      WHERE a.locked_until IS NULL OR a.locked_until <= ${now}::timestamptz
      RETURNING 1
    )
    SELECT EXISTS (SELECT 1 FROM counted) AS admitted,
           (SELECT locked_until FROM login_attempts WHERE email_key = ${emailKey}) AS locked_until`.pipe(
    Effect.map(([row]): Admission =>
      row!.admitted
        ? { admitted: true }
        : { admitted: false, retryAfterSeconds: retryAfterSeconds(row!.locked_until, now) }
    )
  )
}

/** A successful login starts the count again. */
export const clearLoginAttempts = (sql: SqlClient.SqlClient, emailKey: string) =>
  sql`DELETE FROM login_attempts WHERE email_key = ${emailKey}`.pipe(Effect.asVoid)
