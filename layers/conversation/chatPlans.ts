import { Effect, Option } from "effect"
import type { ConversationPlan } from "../../services/ConversationEngine.ts"
import { ConversationStarts } from "../../services/ConversationStarts.ts"
import { WorkflowRepo } from "../../services/WorkflowRepo.ts"
import { Conflict } from "../../src/domain/errors.ts"
import type { WorkflowGraph } from "../../src/graph/definition.ts"
import { validateDefinition } from "../../src/graph/validation.ts"
import type { ClaimedRun } from "./chatRunRows.ts"

const GRAPH_CACHE_LIMIT = 1000

/**
 * Builds the engine's plan for a claimed run. Published and archived versions never change, so
 * their validated graphs are cached by definition id; a draft run carries its own snapshot.
 */
export const makeChatPlans = Effect.gen(function*() {
  const repo = yield* WorkflowRepo
  const starts = yield* ConversationStarts
  const graphs = new Map<number, WorkflowGraph>()

  const graphOf = (definition: unknown): Effect.Effect<WorkflowGraph, Conflict> => {
    const { graph } = validateDefinition(definition)
    return graph
      ? Effect.succeed(graph)
      : Effect.fail(new Conflict({ message: "The agent version of this session can no longer run" }))
  }

  const publishedGraph = (definitionId: number | null) =>
    Effect.gen(function*() {
      const cached = definitionId === null ? undefined : graphs.get(definitionId)
      if (cached) return cached
      const definition = definitionId === null ? Option.none() : yield* repo.definition(definitionId)
      if (Option.isNone(definition)) {
        return yield* Effect.fail(new Conflict({ message: "The agent version of this session no longer exists" }))
      }
      const graph = yield* graphOf(definition.value)
      if (graphs.size >= GRAPH_CACHE_LIMIT) graphs.clear()
      graphs.set(definitionId!, graph)
      return graph
    })

  const planFor = (run: ClaimedRun): Effect.Effect<ConversationPlan, Conflict> =>
    Effect.gen(function*() {
      const { conversation } = run
      const graph = conversation.definition !== undefined
        ? yield* graphOf(conversation.definition)
        : yield* publishedGraph(run.definition_id)
      return yield* starts.plan(run.organization_id, {
        graph,
        conversation,
        dispositionCodes: run.disposition_codes.filter((code): code is string => typeof code === "string"),
        connection: yield* starts.llmConnection(run.organization_id)
      })
    })

  return {
    planFor,
    cacheGraph: (definitionId: number, graph: WorkflowGraph) => graphs.set(definitionId, graph)
  }
})
