import type { SqlError } from "@effect/sql"
import { Effect, Predicate } from "effect"

/**
 * The one policy for a failing statement: it becomes a defect. A caller cannot act on a lost
 * connection or a broken query, so only the domain's own errors stay in the error channel (a
 * constraint a caller can act on is caught by name before this, and becomes a domain error).
 */
export const dieOnSqlError = <A, E, R>(
  effect: Effect.Effect<A, E, R>
): Effect.Effect<A, Exclude<E, Extract<E, SqlError.SqlError>>, R> =>
  Effect.catchIf(
    effect,
    (error): error is Extract<E, SqlError.SqlError> => Predicate.isTagged(error, "SqlError"),
    Effect.die
  )

/** Whether the statement broke the named unique constraint (a row that exists already). */
export const uniqueViolation = (error: SqlError.SqlError, constraint: string) => {
  const cause = error.cause as { code?: string; constraint?: string } | undefined
  return cause?.code === "23505" && cause.constraint === constraint
}
