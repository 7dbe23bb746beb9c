import * as crypto from "node:crypto"

/**
 * Telnyx webhooks: an Ed25519 signature (base64, `telnyx-signature-ed25519`) over
 * `${telnyx-timestamp}|${raw body}`, checked with the account's public key. Old timestamps are
 * refused so a captured webhook cannot be replayed later.
 */
export const TELNYX_TOLERANCE_SECONDS = 300

/** DER prefix of an Ed25519 SubjectPublicKeyInfo; the portal shows only the raw 32-byte key. */
const ED25519_SPKI_PREFIX = Buffer.from("302a300506032b6570032100", "hex")

export const telnyxPublicKey = (base64Key: string) => {
  const raw = Buffer.from(base64Key, "base64")
  if (raw.length !== 32) return null
  return crypto.createPublicKey({ key: Buffer.concat([ED25519_SPKI_PREFIX, raw]), format: "der", type: "spki" })
}

export const isValidTelnyxSignature = (
  publicKeyBase64: string | undefined,
  rawBody: string,
  timestamp: string | undefined,
  signature: string | undefined,
  nowSeconds: number
) => {
  if (!publicKeyBase64 || !timestamp || !signature) return false
  const sent = Number(timestamp)
  if (!Number.isFinite(sent) || Math.abs(nowSeconds - sent) > TELNYX_TOLERANCE_SECONDS) return false
  const key = telnyxPublicKey(publicKeyBase64)
  if (!key) return false
  try {
    return crypto.verify(null, Buffer.from(`${timestamp}|${rawBody}`, "utf8"), key, Buffer.from(signature, "base64"))
  } catch {
    return false
  }
}
