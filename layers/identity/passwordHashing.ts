import { Effect, Layer } from "effect"
import * as os from "node:os"
import { PasswordHashing } from "../../services/PasswordHashing.ts"
import { TooManyRequests } from "../../src/domain/errors.ts"
import { hashPassword, passwordHashingConcurrency, verifyPassword } from "../../src/identity/passwords.ts"
import { makeBoundedGate } from "./boundedGate.ts"

/** At ~10 ms a hash and one at a time, the last of these waits about 2.5 s. */
const MAX_WAITING = 256

interface Argon2 {
  readonly hash: (password: string) => Effect.Effect<string>
  readonly verify: (passwordHash: string, password: string) => Effect.Effect<boolean>
}

export const makePasswordHashing = (
  permits: number,
  argon2: Argon2 = { hash: hashPassword, verify: verifyPassword },
  maxWaiting = MAX_WAITING
) =>
  Effect.gen(function*() {
    const gate = yield* makeBoundedGate(permits, maxWaiting)
    const busy = new TooManyRequests({
      message: "Too many passwords are being checked right now; try again in a moment",
      retryAfterSeconds: 1
    })
    // A hash that has started runs to its end even if its request goes away: the thread is busy
    // until then, so releasing the permit early would let aborted requests exceed the bound.
    const gated = <A>(work: Effect.Effect<A>) => gate(Effect.uninterruptible(work), busy)
    return PasswordHashing.of({
      hash: (password) => gated(argon2.hash(password)),
      verify: (passwordHash, password) => gated(argon2.verify(passwordHash, password))
    })
  })

export const PasswordHashingLive = Layer.effect(
  PasswordHashing,
  makePasswordHashing(passwordHashingConcurrency(os.availableParallelism()))
)
