import { Duration, Effect, Layer } from "effect"
import { APIConnectionTimeoutError } from "openai"
import { LlmGenerator, type StructuredRequest } from "../../services/LlmGenerator.ts"
import { llmTimeoutSeconds } from "./llmTimeout.ts"
import { makeOpenAiClients, OPENAI_API } from "./openaiClients.ts"
import { classifyLlmFailure, logLlmFailure } from "./providerFailure.ts"

/** Local models often wrap JSON in a Markdown fence even when asked not to. */
const parseJson = (text: string): unknown => {
  const unfenced = text.trim().replace(/^```(?:json)?\s*([\s\S]*?)\s*```$/i, "$1")
  try {
    return JSON.parse(unfenced)
  } catch {
    return undefined
  }
}

/**
 * The LLM generator on the `openai` client, which speaks to any OpenAI-compatible endpoint through
 * its base URL. The client's own retries are off: one bounded attempt, the caller decides the rest.
 */
export const LlmGeneratorLive = Layer.effect(
  LlmGenerator,
  Effect.gen(function* () {
    const timeoutSeconds = yield* llmTimeoutSeconds
    const clientFor = makeOpenAiClients(timeoutSeconds)

    const generateStructured = Effect.fn("LlmGenerator.generateStructured")(function* (request: StructuredRequest) {
      const { connection } = request
      yield* Effect.annotateCurrentSpan({ "llm.model": connection.model, "llm.base_url": connection.baseUrl ?? OPENAI_API })
      const client = clientFor(connection)
      const completion = yield* Effect.tryPromise({
        try: (signal) =>
          client.chat.completions.create(
            {
              model: connection.model,
              messages: request.messages.map((message) => ({ role: message.role, content: message.content })),
              response_format: {
                type: "json_schema",
                json_schema: { name: request.schemaName, strict: true, schema: request.jsonSchema }
              }
            },
            { signal }
          ),
        catch: (error) => error
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.seconds(timeoutSeconds),
          onTimeout: () => new APIConnectionTimeoutError()
        }),
        Effect.tapError((error) => logLlmFailure("LLM request failed", connection, error)),
        Effect.mapError((error) => classifyLlmFailure(error, timeoutSeconds))
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
