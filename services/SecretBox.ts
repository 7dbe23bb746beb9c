import { Context, type Effect, Schema } from "effect"

export class SecretUnreadable extends Schema.TaggedError<SecretUnreadable>()("SecretUnreadable", {
  message: Schema.String
}) {}

/**
 * The server secret at work: keyed hashes for tokens and API keys (a leaked table alone cannot be
 * checked against guesses), authenticated encryption for provider credentials, and signatures for
 * URLs we hand out.
 */
export interface SecretBoxShape {
  /** Deterministic keyed hash (HMAC-SHA256, hex), for looking up high-entropy tokens. */
  readonly tokenHash: (token: string) => string
  /** AES-256-GCM with a random nonce; the output is self-describing (`v1.<nonce>.<ciphertext>.<tag>`). */
  readonly encrypt: (plaintext: string) => string
  readonly decrypt: (sealed: string) => Effect.Effect<string, SecretUnreadable>
  /** HMAC-SHA256 signature (base64url) of a message, under a purpose-specific key. */
  readonly sign: (purpose: string, message: string) => string
  readonly verify: (purpose: string, message: string, signature: string) => boolean
}

export class SecretBox extends Context.Tag("talkgraph/SecretBox")<SecretBox, SecretBoxShape>() {}
