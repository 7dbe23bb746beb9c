import type { SqlError } from "@effect/sql/SqlError"
import { Clock, Effect, Schedule } from "effect"
import { LEASE_SECONDS } from "./chatRunRows.ts"

/** A claim is renewed once it is this old: at most a third of the lease has run out. */
const RENEW_AFTER_MS = (LEASE_SECONDS * 1000) / 3
/** How often held claims are looked at; a due claim waits at most this long (half the lease stays). */
const CHECK_EVERY_MS = RENEW_AFTER_MS / 2

/**
 * The chat claims this process holds while answering, kept alive by one fiber for all of them.
 * Nearly every reply ends long before its claim needs renewing, so a renewing fiber per message
 * would be forked and interrupted for nothing on every turn.
 */
export const makeClaimRenewals = (renew: (runId: number, token: string) => Effect.Effect<unknown, SqlError>) =>
  Effect.gen(function*() {
    const held = new Map<string, { readonly runId: number; renewedAt: number }>()

    const renewDue = Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const due = [...held].filter(([, claim]) => now - claim.renewedAt >= RENEW_AFTER_MS)
      return Effect.forEach(due, ([token, claim]) =>
        renew(claim.runId, token).pipe(
          Effect.zipRight(Clock.currentTimeMillis),
          Effect.tap((renewedAt) => Effect.sync(() => (claim.renewedAt = renewedAt))),
          Effect.catchAllCause((cause) => Effect.logWarning("Could not renew a chat claim", cause))
        ), { discard: true })
    })
    yield* renewDue.pipe(Effect.repeat(Schedule.spaced(`${CHECK_EVERY_MS} millis`)), Effect.forkScoped)

    /** Keeps the claim alive while `effect` runs. */
    const hold = <A, E, R>(runId: number, token: string, effect: Effect.Effect<A, E, R>) =>
      Effect.acquireUseRelease(
        Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => held.set(token, { runId, renewedAt: now }))),
        () => effect,
        () => Effect.sync(() => held.delete(token))
      )

    return { hold }
  })
