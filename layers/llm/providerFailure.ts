import { Effect, Redacted } from "effect"
import { APIConnectionTimeoutError, APIError, APIUserAbortError } from "openai"
import { type LlmConnection, LlmFailed } from "../../services/LlmGenerator.ts"
import { ProviderReplyFailed } from "./chatCompletionsStream.ts"

/** What callers see of a failed request: its kind and status, never the provider's text. */
export const classifyLlmFailure = (error: unknown, timeoutSeconds: number): LlmFailed => {
  if (error instanceof LlmFailed) return error
  if (error instanceof ProviderReplyFailed) return error.failure
  if (error instanceof APIConnectionTimeoutError || error instanceof APIUserAbortError) {
    return new LlmFailed({ reason: "timeout", status: null, message: `no answer within ${timeoutSeconds} s` })
  }
  if (error instanceof APIError && typeof error.status === "number") {
    return new LlmFailed({ reason: "rejected", status: error.status, message: `HTTP ${error.status}` })
  }
  return new LlmFailed({ reason: "unreachable", status: null, message: "connection failed or the reply broke off" })
}

/** Key-shaped words (`sk-…`, `rk-…`, also partly masked ones): providers quote a rejected key back. */
const KEY_SHAPED = /\b(?:sk|rk|pk)-[\w*.-]{6,}/g

/** The provider's own text, for the operator: the organization's key, or anything shaped like one, taken out. */
const providerText = (connection: LlmConnection, error: unknown) => {
  const text = error instanceof Error ? error.message : String(error)
  const key = connection.apiKey ? Redacted.value(connection.apiKey) : ""
  return (key.length > 0 ? text.split(key).join("[redacted]") : text).replace(KEY_SHAPED, "[redacted]")
}

/** Logs a failed request with what the provider said about it. */
export const logLlmFailure = (message: string, connection: LlmConnection, error: unknown) =>
  Effect.logWarning(message).pipe(Effect.annotateLogs({ model: connection.model, error: providerText(connection, error) }))
