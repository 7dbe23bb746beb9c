import { SqlClient } from "@effect/sql"
import { Effect, Option } from "effect"
import type { ConversationPlan } from "../../services/ConversationEngine.ts"
import { ModelSettings } from "../../services/ModelSettings.ts"
import { RecordingCatalog } from "../../services/Recordings.ts"
import { Conflict, ValidationFailed } from "../../src/domain/errors.ts"
import type { WorkflowGraph } from "../../src/graph/definition.ts"
import { validateDefinition } from "../../src/graph/validation.ts"
import { runRecordingIds } from "../../src/recordings/recordingReferences.ts"
import type { ClaimedRun } from "./chatRunRows.ts"

const GRAPH_CACHE_LIMIT = 1000
const noRecordingTexts: ReadonlyMap<string, string> = new Map()

/** The graph of a definition that can run, validated once; otherwise why not, as workflow validation reports it. */
export const runnableGraph = (definition: unknown): Effect.Effect<WorkflowGraph, ValidationFailed> => {
  const { graph, problems } = validateDefinition(definition)
  if (graph && problems.length === 0) return Effect.succeed(graph)
  return Effect.fail(
    new ValidationFailed({
      message: "The agent's definition cannot run",
      problems: problems.map((problem) => ({
        loc: ["workflow_definition", ...problem.path],
        msg: problem.message,
        type: problem.rule
      }))
    })
  )
}

/**
 * Builds the engine's plan for a claimed run. Published and archived versions never change, so
 * their validated graphs are cached by definition id; a draft run carries its own snapshot.
 */
export const makeChatPlans = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const modelSettings = yield* ModelSettings
  const recordings = yield* RecordingCatalog
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
      const rows = definitionId === null
        ? []
        : yield* sql<
          { workflow_definition: unknown }
        >`SELECT workflow_definition FROM workflow_definitions WHERE id = ${definitionId}`.pipe(Effect.orDie)
      if (!rows[0]) {
        return yield* Effect.fail(new Conflict({ message: "The agent version of this session no longer exists" }))
      }
      const graph = yield* graphOf(rows[0].workflow_definition)
      if (graphs.size >= GRAPH_CACHE_LIMIT) graphs.clear()
      graphs.set(definitionId!, graph)
      return graph
    })

  const connectionFor = (organizationId: number) =>
    modelSettings.llmFor(organizationId).pipe(
      Effect.flatMap(Option.match({
        onNone: () =>
          Effect.fail(
            new Conflict({
              message:
                "No LLM is configured for this organization: set one with PUT /api/v1/organizations/model-configurations"
            })
          ),
        onSome: Effect.succeed
      }))
    )

  /** The text each clip the run may play stands for in chat; most agents play none, and skip the lookup. */
  const recordingTextsFor = (organizationId: number, graph: WorkflowGraph, context: ConversationPlan["context"]) => {
    const ids = runRecordingIds(graph, context)
    return ids.size === 0 ? Effect.succeed(noRecordingTexts) : recordings.spokenTexts(organizationId, ids)
  }

  const planFor = (run: ClaimedRun): Effect.Effect<ConversationPlan, Conflict> =>
    Effect.gen(function*() {
      const { conversation } = run
      const graph = conversation.definition !== undefined
        ? yield* graphOf(conversation.definition)
        : yield* publishedGraph(run.definition_id)
      return {
        graph,
        context: conversation.context,
        connection: yield* connectionFor(run.organization_id),
        limits: conversation.limits,
        dispositionCodes: run.disposition_codes.filter((code): code is string => typeof code === "string"),
        recordingTexts: yield* recordingTextsFor(run.organization_id, graph, conversation.context)
      }
    })

  return {
    planFor,
    connectionFor,
    recordingTextsFor,
    cacheGraph: (definitionId: number, graph: WorkflowGraph) => graphs.set(definitionId, graph)
  }
})
