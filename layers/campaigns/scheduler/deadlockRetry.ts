import type { SqlError } from "@effect/sql"
import { Effect, Schedule } from "effect"

const RETRYABLE = new Set(["40P01", "40001"])

const isRetryable = (error: unknown) =>
  typeof error === "object" && error !== null && (error as SqlError.SqlError)._tag === "SqlError" &&
  RETRYABLE.has(((error as SqlError.SqlError).cause as { code?: string } | undefined)?.code ?? "")

/**
 * Dialer transactions touch rows other features also lock (runs, and the usage rollup a runs
 * trigger maintains). Their lock order is kept consistent, but PostgreSQL may still pick one as
 * a deadlock victim under load; the whole transaction is then simply run again.
 */
export const retryOnDeadlock = <A, E, R>(transaction: Effect.Effect<A, E, R>) =>
  transaction.pipe(
    Effect.retry({ schedule: Schedule.exponential("10 millis").pipe(Schedule.jittered), times: 5, while: isRetryable })
  )
