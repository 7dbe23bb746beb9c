import { Effect, Either } from "effect"
import { type LlmConnection, type LlmFailed, LlmGenerator } from "../../services/LlmGenerator.ts"
import { UpstreamFailed } from "../../src/domain/errors.ts"
import { buildStarterWorkflow, type StarterWorkflow } from "../../src/graph/starterGraph.ts"
import { templateContentJsonSchema } from "../../src/graph/templateContent.ts"
import {
  type ChatMessage,
  correctionMessages,
  TEMPLATE_SCHEMA_NAME,
  templateMessages,
  type TemplateRequest
} from "../../src/graph/templatePrompt.ts"

/** One correction round: the model sees its answer and what was wrong with it, once. */
const ATTEMPTS = 2

const explain = (failure: LlmFailed, timeoutSeconds: number) => {
  switch (failure.reason) {
    case "timeout":
      return `The organization's LLM did not answer within ${timeoutSeconds} seconds`
    // One message for every other failure: which one it was (refused, status, no answer) is for the server log only.
    case "rejected":
    case "unreachable":
      return "The organization's LLM could not be used; check the model, base_url and api_key in the model configuration (the server log has the details)"
  }
}

/**
 * Asks the organization's LLM for an agent's content and wraps it in a validated starter graph.
 * Unusable output is retried once with the problems fed back; nothing here touches the database,
 * so no transaction is ever held open across the LLM call.
 */
export const generateStarterWorkflow = (connection: LlmConnection, request: TemplateRequest) =>
  Effect.gen(function*() {
    const llm = yield* LlmGenerator
    let messages: Array<ChatMessage> = templateMessages(request)
    for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
      const reply = yield* llm.generateStructured({
        connection,
        messages,
        schemaName: TEMPLATE_SCHEMA_NAME,
        jsonSchema: templateContentJsonSchema
      }).pipe(Effect.mapError((failure) => new UpstreamFailed({ message: explain(failure, llm.timeoutSeconds) })))
      const built = reply.value === undefined
        ? Either.left(["The answer is not a JSON object matching the schema"])
        : buildStarterWorkflow(reply.value)
      if (Either.isRight(built)) return built.right satisfies StarterWorkflow
      yield* Effect.logInfo("Generated agent content was not usable").pipe(
        Effect.annotateLogs({ attempt, problems: built.left.slice(0, 10).join(" | ") })
      )
      messages = [...messages, ...correctionMessages(reply.text, built.left)]
    }
    return yield* new UpstreamFailed({
      message:
        `The organization's LLM did not produce a usable agent in ${ATTEMPTS} attempts; try again or configure a more capable model`
    })
  }).pipe(Effect.withSpan("Workflows.generateStarterWorkflow"))
