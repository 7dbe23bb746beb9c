import { Effect, Layer, Option } from "effect"
import { ConversationStarts, type StoredConversation, type VersionContent } from "../../services/ConversationStarts.ts"
import type { LlmConnection } from "../../services/LlmGenerator.ts"
import { ModelSettings } from "../../services/ModelSettings.ts"
import { RecordingCatalog } from "../../services/Recordings.ts"
import { ToolRunner } from "../../services/ToolRunner.ts"
import { Tools } from "../../services/Tools.ts"
import { WorkflowRepo } from "../../services/WorkflowRepo.ts"
import { overridesOf } from "../../src/conversation/agentOverrides.ts"
import { initialState } from "../../src/conversation/conversationState.ts"
import { doNotCallToolSetting } from "../../src/conversation/doNotCallTool.ts"
import { limitsFrom } from "../../src/conversation/limits.ts"
import { runContext } from "../../src/conversation/runContext.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import { OrganizationId, WorkflowId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import type { WorkflowGraph } from "../../src/graph/definition.ts"
import { graphToolUuids } from "../../src/graph/toolReferences.ts"
import { validateDefinition } from "../../src/graph/validation.ts"
import { runRecordingIds } from "../../src/recordings/recordingReferences.ts"
import { toolVariables } from "../../src/tools/httpToolRequest.ts"
import { contextWithFetched, preCallFetchOf } from "../../src/tools/preCallFetch.ts"
import { llmTimeoutSeconds } from "../llm/llmTimeout.ts"
import { chatIdleTimeoutSeconds } from "./chatConfig.ts"

const noRecordingTexts: ReadonlyMap<string, string> = new Map()

/** The graph of a definition that can run, validated once; otherwise why not, as workflow validation reports it. */
const runnableGraph = (definition: unknown): Effect.Effect<WorkflowGraph, ValidationFailed> => {
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

const startNodeOf = (graph: WorkflowGraph) => graph.nodes.find((node) => node.type === "startCall")

export const ConversationStartsLive = Layer.effect(
  ConversationStarts,
  Effect.gen(function*() {
    const repo = yield* WorkflowRepo
    const modelSettings = yield* ModelSettings
    const recordings = yield* RecordingCatalog
    const tools = yield* Tools
    const runner = yield* ToolRunner
    const defaults = { llmTimeoutSeconds: yield* llmTimeoutSeconds, idleTimeoutSeconds: yield* chatIdleTimeoutSeconds }

    const startingConversation = (
      startNodeId: string,
      version: VersionContent,
      initialContext: Readonly<Record<string, unknown>>
    ): StoredConversation => {
      const overrides = overridesOf(version.workflow_configurations)
      return {
        state: initialState(startNodeId),
        context: runContext(version.template_context_variables, initialContext),
        limits: limitsFrom(version.workflow_configurations, defaults),
        ...(overrides ? { overrides } : {}),
        ...(doNotCallToolSetting.isOn(version.workflow_configurations) ? { doNotCallTool: true } : {})
      }
    }

    /**
     * The agent's pre-call fetch over a starting conversation: its context with the answer's
     * variables, the same without them when the fetch failed and may be skipped, or why not
     * (`Left`) when the agent refuses to start without it.
     */
    const withPreCallFetch = (
      organizationId: OrganizationId,
      version: VersionContent,
      conversation: StoredConversation
    ) =>
      Effect.gen(function*() {
        const fetch = preCallFetchOf(version.workflow_configurations)
        if (fetch === null) return { _tag: "Right" as const, conversation }
        const found = (yield* tools.runnable(organizationId, new Set([fetch.tool_uuid]))).get(fetch.tool_uuid)
        const outcome = found && found.definition.type === "http_api"
          ? yield* runner.run({
            organizationId,
            tool: found,
            arguments: "{}",
            variables: toolVariables(conversation.context, {})
          })
          : null
        const pointer = found?.definition.type === "http_api" ? found.definition.config.response_pointer : null
        const context = outcome?.status === "success"
          ? contextWithFetched(conversation.context, outcome.data, pointer)
          : null
        if (context !== null) return { _tag: "Right" as const, conversation: { ...conversation, context } }
        const why = outcome === null
          ? `its tool ${fetch.tool_uuid} is not an active HTTP API tool of this organization`
          : outcome.status === "error"
          ? outcome.result.replace(/^Error: /, "")
          : "its answer is not a JSON object"
        yield* Effect.logWarning("Pre-call fetch failed").pipe(
          Effect.annotateLogs({ tool_uuid: fetch.tool_uuid, on_failure: fetch.on_failure, reason: why })
        )
        return fetch.on_failure === "refuse"
          ? { _tag: "Left" as const, reason: `The agent's pre-call fetch failed (${why}) and it is set to refuse` }
          : { _tag: "Right" as const, conversation }
      })

    const prepare = Effect.fn("ConversationStarts.prepare")(function*(
      principal: Principal,
      requestedId: number,
      options: {
        readonly useDraft: boolean
        readonly initialContext: Readonly<Record<string, unknown>>
        readonly channel: "session" | "call"
      }
    ) {
      // Branded here: the browser-call path still hands over a plain number.
      const workflowId = WorkflowId.make(requestedId)
      yield* Effect.annotateCurrentSpan({ workflow_id: workflowId, organization_id: principal.organizationId })
      const { exists, versions } = yield* repo.startableVersions(principal.organizationId, workflowId)
      if (!exists) return yield* new NotFound({ resource: "Workflow", id: workflowId })
      if (versions.length === 0) {
        return yield* new Conflict({ message: "This workflow has no published version to chat with" })
      }
      if (versions[0]!.workflow_status === "archived") {
        return yield* new Conflict({ message: "This workflow is archived" })
      }
      const published = versions.find((row) => row.version_status === "published")
      const version = options.useDraft ? versions.find((row) => row.version_status === "draft") ?? published : published
      if (!version) {
        return yield* new Conflict({
          message:
            `This workflow has no published version yet: publish it, or start the ${options.channel} with use_draft`
        })
      }
      const graph = yield* runnableGraph(version.workflow_definition)
      const fetched = yield* withPreCallFetch(
        principal.organizationId,
        version,
        startingConversation(startNodeOf(graph)!.id, version, options.initialContext)
      )
      if (fetched._tag === "Left") return yield* new Conflict({ message: fetched.reason })
      const conversation = fetched.conversation
      return {
        workflowId,
        definitionId: version.definition_id,
        versionNumber: version.version_number,
        graph,
        conversation: version.version_status === "draft"
          ? { ...conversation, definition: version.workflow_definition }
          : conversation,
        dispositionCodes: version.disposition_codes.filter((code): code is string => typeof code === "string")
      }
    })

    const conversationOf = Effect.fn("ConversationStarts.conversationOf")(
      function*(version: VersionContent, initialContext: Readonly<Record<string, unknown>>, organizationId?: number) {
        const { graph } = validateDefinition(version.workflow_definition)
        const start = graph && startNodeOf(graph)
        if (!start) return null
        const conversation = startingConversation(start.id, version, initialContext)
        if (organizationId === undefined) return conversation
        const fetched = yield* withPreCallFetch(OrganizationId.make(organizationId), version, conversation)
        return fetched._tag === "Right" ? fetched.conversation : null
      }
    )

    const llmConnection = Effect.fn("ConversationStarts.llmConnection")((organizationId: number) =>
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
    )

    const plan = Effect.fn("ConversationStarts.plan")(function*(
      organizationId: number,
      run: {
        readonly graph: WorkflowGraph
        readonly conversation: StoredConversation
        readonly dispositionCodes: ReadonlyArray<string>
        readonly connection: LlmConnection
        readonly partyNumber?: string | null | undefined
      }
    ) {
      const { context, limits } = run.conversation
      // Most agents play no clip, and skip the lookup of their texts.
      const clipIds = runRecordingIds(run.graph, context)
      const toolUuids = graphToolUuids(run.graph)
      const owner = OrganizationId.make(organizationId)
      const overrides = run.conversation.overrides
      return {
        graph: run.graph,
        context,
        connection: {
          ...run.connection,
          ...(overrides?.llm_model ? { model: overrides.llm_model } : {}),
          ...(overrides?.llm_temperature !== undefined ? { temperature: overrides.llm_temperature } : {})
        },
        limits,
        dispositionCodes: run.dispositionCodes,
        recordingTexts: clipIds.size === 0 ? noRecordingTexts : yield* recordings.spokenTexts(organizationId, clipIds),
        tools: toolUuids.size === 0
          ? undefined
          : { organizationId: owner, byUuid: yield* tools.runnable(owner, toolUuids) },
        knowledge: run.graph.nodes.some((node) =>
            node.type !== "endCall" && (node.data.document_uuids?.length ?? 0) > 0
          )
          ? { organizationId: owner }
          : undefined,
        doNotCall: run.conversation.doNotCallTool
          ? { organizationId: owner, phoneNumber: run.partyNumber ?? null }
          : undefined
      }
    })

    return ConversationStarts.of({ prepare, conversationOf, llmConnection, plan })
  })
)
