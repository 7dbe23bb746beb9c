import { Duration, Effect, Layer, Redacted } from "effect"
import type { ChatCompletion } from "openai/resources/chat/completions"
import { type LlmConnection, LlmGenerator, type StructuredRequest } from "../../services/LlmGenerator.ts"
import { OutboundHttp, type OutboundHttpShape } from "../../services/OutboundHttp.ts"
import { endpointUnder } from "../../src/outbound/baseUrls.ts"
import { readReply, REPLY_LIMITS } from "../outbound/replyBody.ts"
import { llmTimeoutSeconds } from "./llmTimeout.ts"
import { OPENAI_API } from "./openaiApi.ts"
import { brokenReply, classifyLlmFailure, logLlmFailure, refusedRequest, timedOut } from "./providerFailure.ts"

/** Local models often wrap JSON in a Markdown fence even when asked not to. */
const parseJson = (text: string): unknown => {
  const unfenced = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, "$1")
  try {
    return JSON.parse(unfenced)
  } catch {
    return undefined
  }
}

/** `POST {base}/chat/completions` unstreamed, answered whole as JSON (read within REPLY_LIMITS). */
const complete = async (
  outbound: OutboundHttpShape,
  connection: LlmConnection,
  body: unknown,
  signal: AbortSignal
): Promise<ChatCompletion> => {
  const base = connection.baseUrl ?? OPENAI_API
  const url = endpointUnder(base, "/chat/completions")
  if (url === null) throw brokenReply(`the base URL ${base} has a query string, a fragment or credentials`)
  const payload = JSON.stringify(body)
  const response = await outbound.send("model", {
    url,
    method: "POST",
    headers: {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload),
      accept: "application/json",
      ...(connection.apiKey ? { authorization: `Bearer ${Redacted.value(connection.apiKey)}` } : {})
    },
    body: payload,
    signal,
    resendOnStaleConnection: true
  })
  const status = response.statusCode ?? 0
  if (status < 200 || status > 299) {
    const text = await readReply(response, REPLY_LIMITS.refusalText, { truncate: true }).catch(() => Buffer.alloc(0))
    throw refusedRequest(status, `HTTP ${status}: ${text.toString("utf8")}`)
  }
  const text = (await readReply(response, REPLY_LIMITS.chatCompletionJson)).toString("utf8")
  let answer: (ChatCompletion & { error?: unknown }) | undefined
  try {
    answer = JSON.parse(text)
  } catch {
    throw brokenReply(`an answer that is not JSON: ${text.slice(0, 200)}`)
  }
  if (!answer || answer.error || !Array.isArray(answer.choices)) {
    throw refusedRequest(null, text.slice(0, REPLY_LIMITS.refusalText))
  }
  return answer
}

/**
 * Structured generation against any OpenAI-compatible endpoint (its base URL), through the
 * outbound client the chat stream uses: one policy, one bound on what is read. One bounded
 * attempt: retrying is the caller's decision.
 */
export const LlmGeneratorLive = Layer.effect(
  LlmGenerator,
  Effect.gen(function*() {
    const timeoutSeconds = yield* llmTimeoutSeconds
    const outbound = yield* OutboundHttp

    const generateStructured = Effect.fn("LlmGenerator.generateStructured")(function*(request: StructuredRequest) {
      const { connection } = request
      yield* Effect.annotateCurrentSpan({
        "llm.model": connection.model,
        "llm.base_url": connection.baseUrl ?? OPENAI_API
      })
      const body = {
        model: connection.model,
        messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
        response_format: {
          type: "json_schema",
          json_schema: { name: request.schemaName, strict: true, schema: request.jsonSchema }
        }
      }
      const completion = yield* Effect.tryPromise({
        try: (signal) => complete(outbound, connection, body, signal),
        catch: (error) => error
      }).pipe(
        Effect.timeoutFail({ duration: Duration.seconds(timeoutSeconds), onTimeout: () => timedOut(timeoutSeconds) }),
        Effect.tapError((error) => logLlmFailure("LLM request failed", connection, error)),
        Effect.mapError(classifyLlmFailure)
      )
      const text = completion.choices[0]?.message?.content ?? ""
      return {
        text,
        value: parseJson(text),
        usage: {
          prompt_tokens: completion.usage?.prompt_tokens ?? 0,
          completion_tokens: completion.usage?.completion_tokens ?? 0,
          total_tokens: completion.usage?.total_tokens ?? 0
        }
      }
    })

    return LlmGenerator.of({ generateStructured, timeoutSeconds })
  })
)
