import * as crypto from "node:crypto"

/**
 * Twilio's request signature: base64(HMAC-SHA1(auth token, full URL + every POST parameter's
 * name and value, sorted by name)). The URL must be the public one Twilio called.
 */
export const twilioSignature = (authToken: string, url: string, params: Readonly<Record<string, string>>): string => {
  const payload = Object.keys(params).sort().reduce((text, key) => text + key + params[key], url)
  return crypto.createHmac("sha1", authToken).update(payload, "utf8").digest("base64")
}

export const isValidTwilioSignature = (
  authToken: string,
  url: string,
  params: Readonly<Record<string, string>>,
  signature: string | undefined
): boolean => {
  if (!signature) return false
  const expected = Buffer.from(twilioSignature(authToken, url, params))
  const given = Buffer.from(signature)
  return expected.length === given.length && crypto.timingSafeEqual(expected, given)
}
