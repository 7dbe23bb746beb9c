import { Context, type Effect } from "effect"
import type { TooManyRequests } from "../src/domain/errors.ts"

/**
 * argon2id hashing and checking, a few at a time. Each check is ~10 ms of a core, so a burst of
 * logins run all at once would take every core and every libuv thread (file and DNS work waits
 * behind them) from the requests that need none. Checks wait their turn; when too many are
 * already waiting, the caller is told to retry instead of queueing without bound.
 */
export interface PasswordHashingShape {
  readonly hash: (password: string) => Effect.Effect<string, TooManyRequests>
  /** False for a wrong password or an unreadable hash. */
  readonly verify: (passwordHash: string, password: string) => Effect.Effect<boolean, TooManyRequests>
}

export class PasswordHashing
  extends Context.Tag("talkgraph/PasswordHashing")<PasswordHashing, PasswordHashingShape>()
{}
