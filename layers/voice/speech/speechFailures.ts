import type { SpeechConnection } from "../../../services/ModelSettings.ts"
import { SpeechFailed } from "../../../services/SpeechToText.ts"
import { baseUrlProblem } from "../../../src/outbound/baseUrls.ts"

/** What a provider's HTTP status means for us; the body is never copied (it may echo keys or text). */
export const failureForStatus = (provider: string, status: number): SpeechFailed => {
  if (status === 401 || status === 403) {
    return new SpeechFailed({
      provider,
      reason: "refused",
      message: `${provider} refused the API key (HTTP ${status})`
    })
  }
  if (status === 402 || status === 429) {
    return new SpeechFailed({
      provider,
      reason: "refused",
      message: `${provider} refused the request: quota or rate limit (HTTP ${status})`
    })
  }
  if (status >= 500) {
    return new SpeechFailed({ provider, reason: "unreachable", message: `${provider} failed (HTTP ${status})` })
  }
  return new SpeechFailed({
    provider,
    reason: "protocol",
    message: `${provider} rejected the request (HTTP ${status})`
  })
}

/** A connection that never got an answer: refused, reset, unknown host. */
export const unreachable = (provider: string, error: unknown): SpeechFailed => {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | null)?.code ??
    (error as { cause?: { code?: unknown } } | null)?.cause?.code
  return new SpeechFailed({
    provider,
    reason: "unreachable",
    message: `could not reach ${provider}${typeof code === "string" ? ` (${code})` : ""}`
  })
}

export const tooLarge = (provider: string, limit: number) =>
  new SpeechFailed({ provider, reason: "protocol", message: `${provider} sent a reply larger than ${limit} bytes` })

export const timedOut = (provider: string, what: string, seconds: number) =>
  new SpeechFailed({ provider, reason: "timeout", message: `${provider}: ${what} within ${seconds} s` })

export const missingKey = (provider: string) =>
  new SpeechFailed({ provider, reason: "refused", message: `no API key is set for ${provider}` })

/**
 * Why a connection cannot be used at all: a provider's own API needs a key (an endpoint of the
 * organization's own, `base_url`, may not), and a base URL must keep its requests' paths fixed
 * (a value saved before that rule is refused here).
 */
export const unusableConnection = (connection: SpeechConnection): SpeechFailed | null => {
  if (connection.baseUrl !== null && baseUrlProblem(connection.baseUrl) !== null) {
    return new SpeechFailed({
      provider: connection.provider,
      reason: "refused",
      message: `the base_url of ${connection.provider} ${baseUrlProblem(connection.baseUrl)}`
    })
  }
  return connection.apiKey === null && connection.baseUrl === null ? missingKey(connection.provider) : null
}
