/**
 * The media-stream link a carrier opens after answering: the run id is in the path, and the token
 * binds it to an expiry under the server secret, so the link is neither guessable nor reusable
 * later (the incumbent's media socket was open to anyone who knew a run id).
 */
export const MEDIA_TOKEN_PURPOSE = "telephony-media"

type Sign = (purpose: string, message: string) => string
type Verify = (purpose: string, message: string, signature: string) => boolean

const message = (runId: number, expiresAt: number) => `${runId}.${expiresAt}`

/** `<expiry epoch seconds>.<signature>` */
export const mediaToken = (sign: Sign, runId: number, expiresAtSeconds: number) =>
  `${expiresAtSeconds}.${sign(MEDIA_TOKEN_PURPOSE, message(runId, expiresAtSeconds))}`

export const isValidMediaToken = (verify: Verify, runId: number, token: string, nowSeconds: number): boolean => {
  const dot = token.indexOf(".")
  if (dot <= 0) return false
  const expiresAt = Number(token.slice(0, dot))
  if (!Number.isInteger(expiresAt) || expiresAt < nowSeconds) return false
  return verify(MEDIA_TOKEN_PURPOSE, message(runId, expiresAt), token.slice(dot + 1))
}

/**
 * The carrier connects over WebSocket to the same public origin that serves the API. The token is
 * the last path segment, not a query parameter: Twilio's `<Stream url>` does not support query
 * strings and connects without them (twilio.com/docs/voice/twiml/stream), so one form serves every
 * carrier. A token is `[0-9]+.[A-Za-z0-9_-]+` (base64url), safe in a path as it is.
 */
export const mediaStreamUrl = (publicUrl: string, provider: string, runId: number, token: string) =>
  `${publicUrl.replace(/^http/, "ws")}/api/v1/telephony/${provider}/media/${runId}/${token}`

export const statusCallbackUrl = (publicUrl: string, provider: string, runId: number) =>
  `${publicUrl}/api/v1/telephony/${provider}/status/${runId}`

export const answerUrl = (publicUrl: string, provider: string, runId: number) =>
  `${publicUrl}/api/v1/telephony/${provider}/answer/${runId}`

/** Where a carrier reports a cold transfer's destination leg (and answers its `<Dial>` action). */
export const transferEventUrl = (publicUrl: string, provider: string, runId: number) =>
  `${publicUrl}/api/v1/telephony/${provider}/transfer/${runId}`

/**
 * The instructions a carrier that fetches them (Plivo's `aleg_url`) runs for a transfer: the
 * destination and ring timeout ride in the query, which the carrier's signature covers.
 */
export const transferMarkupUrl = (
  publicUrl: string,
  provider: string,
  runId: number,
  destination: string,
  timeoutSeconds: number
) =>
  `${transferEventUrl(publicUrl, provider, runId)}/markup?${new URLSearchParams({
    to: destination,
    timeout: String(timeoutSeconds)
  })}`
