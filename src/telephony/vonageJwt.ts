import * as crypto from "node:crypto"

/**
 * Vonage's two JWTs: the RS256 token our API calls present (signed with the application's private
 * key), and the HS256 token on its signed webhooks (signed with the account's signature secret,
 * carrying a SHA-256 of the body so the body cannot be swapped).
 */
const base64url = (data: Buffer | string) => Buffer.from(data).toString("base64url")

export const vonageApiToken = (applicationId: string, privateKeyPem: string, nowSeconds: number) => {
  const header = base64url(JSON.stringify({ alg: "RS256", typ: "JWT" }))
  const claims = base64url(JSON.stringify({
    application_id: applicationId,
    iat: nowSeconds,
    exp: nowSeconds + 300,
    jti: crypto.randomUUID()
  }))
  const signature = crypto.sign("RSA-SHA256", Buffer.from(`${header}.${claims}`), privateKeyPem)
  return `${header}.${claims}.${base64url(signature)}`
}

export const vonageWebhookToken = (signatureSecret: string, rawBody: string, nowSeconds: number) => {
  const header = base64url(JSON.stringify({ alg: "HS256", typ: "JWT" }))
  const claims = base64url(JSON.stringify({
    iat: nowSeconds,
    jti: crypto.randomUUID(),
    payload_hash: crypto.createHash("sha256").update(rawBody).digest("hex")
  }))
  const signature = crypto.createHmac("sha256", signatureSecret).update(`${header}.${claims}`).digest()
  return `${header}.${claims}.${base64url(signature)}`
}

/**
 * A token is accepted only within this many seconds of its `iat` (either way, for clock skew): a
 * captured callback cannot be replayed later. A token without a numeric `iat` has no age and is
 * refused, as is one past its `exp`.
 */
const MAX_AGE_SECONDS = 300

const isFresh = (claims: Record<string, unknown>, nowSeconds: number) =>
  typeof claims.iat === "number" && Number.isFinite(claims.iat) &&
  Math.abs(nowSeconds - claims.iat) <= MAX_AGE_SECONDS &&
  (claims.exp === undefined || (typeof claims.exp === "number" && claims.exp >= nowSeconds))

/**
 * What Vonage hashes into `payload_hash`: a POST's body; for a GET (an answer webhook's default
 * method), its query fields as compact JSON, in their order (developer.vonage.com, "Decoding
 * signed webhooks").
 */
export const vonageSignedPayload = (url: string, rawBody: string) => {
  if (rawBody !== "") return rawBody
  const query = new URL(url).searchParams
  return [...query.keys()].length === 0 ? "" : JSON.stringify(Object.fromEntries(query))
}

export const isValidVonageWebhook = (
  signatureSecret: string | undefined,
  authorization: string | undefined,
  signedPayload: string,
  nowSeconds: number
) => {
  if (!signatureSecret || !authorization?.startsWith("Bearer ")) return false
  const [header, claims, signature] = authorization.slice(7).trim().split(".")
  if (!header || !claims || !signature) return false
  try {
    const { alg } = JSON.parse(Buffer.from(header, "base64url").toString("utf8"))
    if (alg !== "HS256") return false
    const expected = crypto.createHmac("sha256", signatureSecret).update(`${header}.${claims}`).digest()
    const given = Buffer.from(signature, "base64url")
    if (expected.length !== given.length || !crypto.timingSafeEqual(expected, given)) return false
    const payload = JSON.parse(Buffer.from(claims, "base64url").toString("utf8"))
    if (typeof payload !== "object" || payload === null || !isFresh(payload, nowSeconds)) return false
    const bodyHash = crypto.createHash("sha256").update(signedPayload).digest("hex")
    return payload.payload_hash === undefined ? signedPayload === "" : payload.payload_hash === bodyHash
  } catch {
    return false
  }
}
