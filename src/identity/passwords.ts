import { hash, verify } from "@node-rs/argon2"
import { Effect } from "effect"

/** argon2id with the library's OWASP-aligned defaults; work runs off the event loop. */
export const hashPassword = (password: string) =>
  Effect.promise(() => hash(password)).pipe(Effect.withSpan("passwords.hash"))

export const verifyPassword = (passwordHash: string, password: string) =>
  Effect.promise(() => verify(passwordHash, password).catch(() => false)).pipe(Effect.withSpan("passwords.verify"))

/**
 * A fixed hash verified when the email is unknown, so a login for a missing user takes as long
 * as one with a wrong password and does not reveal which emails exist.
 */
export const DECOY_HASH =
  "$argon2id$v=19$m=19456,t=2,p=1$w/RKW8rDLOCXe+OVazY/Ag$McU0JjCsie95LZOuFhYbY3DsR8VG9NlsLgSBjhpmjo8"

/**
 * How many hashes may run at once on a machine with `cores` cores: half of them, so other
 * requests keep a core, and at most three, so one of libuv's four default threads stays free for
 * the file and DNS work that shares its pool.
 */
export const passwordHashingConcurrency = (cores: number) => Math.max(1, Math.min(3, Math.floor(cores / 2)))
