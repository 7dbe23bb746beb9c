import { Effect, Redacted } from "effect"
import { type LlmConnection, LlmFailed } from "../../services/LlmGenerator.ts"

/**
 * What callers are told of a failed request whatever went wrong: refused connection, status,
 * broken reply and blocked address alike. Telling them apart would let anyone who can set a
 * base URL map which internal ports answer and how; the server log has the details.
 */
const FAILED = "the LLM request failed; the server log has the details"

/** A refused request or a broken reply: `failure` for callers, the provider's own words as `message` for the log. */
export class ProviderReplyFailed extends Error {
  readonly failure: LlmFailed
  constructor(failure: LlmFailed, detail: string) {
    super(detail)
    this.failure = failure
  }
}

export const brokenReply = (detail: string) =>
  new ProviderReplyFailed(new LlmFailed({ reason: "unreachable", status: null, message: FAILED }), detail)

export const refusedRequest = (status: number | null, detail: string) =>
  new ProviderReplyFailed(new LlmFailed({ reason: "rejected", status, message: FAILED }), detail)

export const timedOut = (timeoutSeconds: number) =>
  new LlmFailed({ reason: "timeout", status: null, message: `no answer within ${timeoutSeconds} s` })

/** What callers see of a failed request: its kind, never the provider's text or the network's. */
export const classifyLlmFailure = (error: unknown): LlmFailed => {
  if (error instanceof LlmFailed) return error
  if (error instanceof ProviderReplyFailed) return error.failure
  return new LlmFailed({ reason: "unreachable", status: null, message: FAILED })
}

/** Key-shaped words (`sk-…`, `rk-…`, also partly masked ones): providers quote a rejected key back. */
const KEY_SHAPED = /\b(?:sk|rk|pk)-[\w*.-]{6,}/g

/** The provider's own text, for the operator: the organization's key, or anything shaped like one, taken out. */
const providerText = (connection: LlmConnection, error: unknown) => {
  const text = error instanceof Error ? error.message : String(error)
  const key = connection.apiKey ? Redacted.value(connection.apiKey) : ""
  return (key.length > 0 ? text.split(key).join("[redacted]") : text).replace(KEY_SHAPED, "[redacted]")
}

/** Logs a failed request with what the provider (or the network) said about it. */
export const logLlmFailure = (message: string, connection: LlmConnection, error: unknown) =>
  Effect.logWarning(message).pipe(
    Effect.annotateLogs({ model: connection.model, error: providerText(connection, error) })
  )
