import { SpeechFailed } from "../../../services/SpeechToText.ts"

/** What a provider's HTTP status means for us; the body is never copied (it may echo keys or text). */
export const failureForStatus = (provider: string, status: number): SpeechFailed => {
  if (status === 401 || status === 403) {
    return new SpeechFailed({ provider, reason: "refused", message: `${provider} refused the API key (HTTP ${status})` })
  }
  if (status === 402 || status === 429) {
    return new SpeechFailed({ provider, reason: "refused", message: `${provider} refused the request: quota or rate limit (HTTP ${status})` })
  }
  if (status >= 500) {
    return new SpeechFailed({ provider, reason: "unreachable", message: `${provider} failed (HTTP ${status})` })
  }
  return new SpeechFailed({ provider, reason: "protocol", message: `${provider} rejected the request (HTTP ${status})` })
}

/** A connection that never got an answer: refused, reset, unknown host. */
export const unreachable = (provider: string, error: unknown): SpeechFailed => {
  const code = (error as { code?: unknown; cause?: { code?: unknown } } | null)?.code ?? (error as { cause?: { code?: unknown } } | null)?.cause?.code
  return new SpeechFailed({
    provider,
    reason: "unreachable",
    message: `could not reach ${provider}${typeof code === "string" ? ` (${code})` : ""}`
  })
}

export const timedOut = (provider: string, what: string, seconds: number) =>
  new SpeechFailed({ provider, reason: "timeout", message: `${provider}: ${what} within ${seconds} s` })

export const missingKey = (provider: string) =>
  new SpeechFailed({ provider, reason: "refused", message: `no API key is set for ${provider}` })
