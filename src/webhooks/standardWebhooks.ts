import * as crypto from "node:crypto"

/**
 * Signing per the Standard Webhooks specification (standardwebhooks.com, "Signature scheme"):
 * the secret is `whsec_` followed by the base64 of the key's bytes; the signed content is
 * `${webhook-id}.${webhook-timestamp}.${body}`; `webhook-signature` is `v1,` and the base64 of
 * its HMAC-SHA256 under the key. The timestamp is in whole seconds since the epoch.
 */
export const SECRET_PREFIX = "whsec_"

/** A secret from 32 random bytes (the spec asks for 24 to 64). */
export const secretFromBytes = (bytes: Uint8Array): string => `${SECRET_PREFIX}${Buffer.from(bytes).toString("base64")}`

export const signature = (secret: string, id: string, timestampSeconds: number, body: string): string => {
  const key = Buffer.from(secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret, "base64")
  const mac = crypto.createHmac("sha256", key).update(`${id}.${timestampSeconds}.${body}`).digest("base64")
  return `v1,${mac}`
}

/**
 * The three headers of a signed message. With several secrets (the new one and, for a while after
 * a rotation, the previous one) the signatures are space-separated, as the spec allows, so a
 * receiver still holding the previous secret keeps verifying until it switches.
 */
export const signedHeaders = (
  secrets: string | ReadonlyArray<string>,
  id: string,
  timestampSeconds: number,
  body: string
) => ({
  "webhook-id": id,
  "webhook-timestamp": String(timestampSeconds),
  "webhook-signature": (typeof secrets === "string" ? [secrets] : secrets)
    .map((secret) => signature(secret, id, timestampSeconds, body))
    .join(" ")
})
