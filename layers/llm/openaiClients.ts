import { Redacted } from "effect"
import OpenAI from "openai"
import type { LlmConnection } from "../../services/LlmGenerator.ts"

export const OPENAI_API = "https://api.openai.com/v1"
const CLIENT_CACHE_LIMIT = 256

/**
 * One `openai` client per endpoint and key, kept: a client holds its connection pool, so making one
 * per request would open connections afresh. Its retries are off (one bounded attempt; the caller
 * decides the rest) and it waits at most `timeoutSeconds` for an answer.
 */
export const makeOpenAiClients = (timeoutSeconds: number) => {
  const clients = new Map<string, OpenAI>()
  return (connection: LlmConnection): OpenAI => {
    const apiKey = connection.apiKey ? Redacted.value(connection.apiKey) : "unused"
    const baseURL = connection.baseUrl ?? OPENAI_API
    const key = `${baseURL}\u0000${apiKey}`
    let client = clients.get(key)
    if (!client) {
      if (clients.size >= CLIENT_CACHE_LIMIT) clients.clear()
      // Local endpoints usually need no key; the client insists on one, so send a placeholder.
      client = new OpenAI({ apiKey, baseURL, timeout: timeoutSeconds * 1000, maxRetries: 0 })
      clients.set(key, client)
    }
    return client
  }
}
