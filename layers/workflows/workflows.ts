import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import { Credentials } from "../../services/Credentials.ts"
import { DocumentCatalog } from "../../services/KnowledgeBase.ts"
import { LlmGenerator } from "../../services/LlmGenerator.ts"
import { ModelSettings } from "../../services/ModelSettings.ts"
import { RecordingCatalog } from "../../services/Recordings.ts"
import { Tools } from "../../services/Tools.ts"
import { type WorkflowRecord, WorkflowRepo } from "../../services/WorkflowRepo.ts"
import { type NewWorkflow, type WorkflowEdit, Workflows } from "../../services/Workflows.ts"
import { publishRequiresTestsSetting } from "../../src/agentTests/publishGate.ts"
import { overrideProblems } from "../../src/conversation/agentOverrides.ts"
import { doNotCallToolSetting } from "../../src/conversation/doNotCallTool.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { WorkflowId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { definitionDocumentUuids } from "../../src/graph/knowledgeReferences.ts"
import type { GraphProblem } from "../../src/graph/problem.ts"
import { definitionCredentialUuids } from "../../src/graph/sideNodeRules.ts"
import type { TemplateRequest } from "../../src/graph/templatePrompt.ts"
import { definitionToolUuids } from "../../src/graph/toolReferences.ts"
import { structureProblems, validateDefinition } from "../../src/graph/validation.ts"
import { type QaNodeProblem, qaNodeSetting, withQaNodeSetting } from "../../src/quality/qaNode.ts"
import { qualityReviewProblems } from "../../src/quality/qualityReview.ts"
import { definitionRecordingIds } from "../../src/recordings/recordingReferences.ts"
import { preCallFetchOf, preCallFetchProblems } from "../../src/tools/preCallFetch.ts"
import { turnSettingProblems } from "../../src/voice/turnTaking/agentSettings.ts"
import { voicemailPolicy, voicemailSettingProblems } from "../../src/voice/voicemailPolicy.ts"
import { makePublishGateCheck } from "../agentTests/publishGateCheck.ts"
import { generateStarterWorkflow } from "./templateGeneration.ts"
import { makeTriggerPathCheck } from "./triggerPathCheck.ts"

const NAME_MAX = 200

/** Graph problems as a 422 listing every one, located under the request's `workflow_definition`. */
const graphRefusal = (problems: ReadonlyArray<GraphProblem>, summary: string) =>
  new ValidationFailed({
    message: summary,
    problems: problems.map((problem) => ({
      loc: ["body", "workflow_definition", ...problem.path],
      msg: problem.message,
      type: problem.rule
    }))
  })

/** Unusable `workflow_configurations` (turn-taking, overrides, pre-call fetch, tools, voicemail, quality review) as a 422 naming each field; none: null. */
const configurationRefusal = (configurations: Readonly<Record<string, unknown>> | null | undefined) => {
  const problems = [
    ...turnSettingProblems(configurations),
    ...overrideProblems(configurations),
    ...preCallFetchProblems(configurations),
    ...doNotCallToolSetting.problems(configurations),
    ...publishRequiresTestsSetting.problems(configurations),
    ...voicemailSettingProblems(configurations),
    ...qualityReviewProblems(configurations)
  ]
  return problems.length === 0 ? null : new ValidationFailed({
    message: `The workflow configurations cannot be used: ${problems.length} problem(s)`,
    problems: problems.map((problem) => ({
      loc: ["body", "workflow_configurations", ...problem.path],
      msg: problem.message,
      type: problem.type
    }))
  })
}

/** A qa node that cannot become the quality review setting, located in the request's definition. */
const qaNodeRefusal = (problems: ReadonlyArray<QaNodeProblem>) =>
  new ValidationFailed({
    message: "The definition's qa node cannot be used",
    problems: problems.map((problem) => ({
      loc: ["body", "workflow_definition", ...problem.path],
      msg: problem.message,
      type: problem.type
    }))
  })

const workflowNotFound = (id: number) => new NotFound({ resource: "Workflow", id })

/**
 * The agent-level operations (validation, template generation, publishing rules) over the
 * repository of definitions. Each operation that writes more than one row owns its transaction.
 */
export const WorkflowsLive = Layer.effect(
  Workflows,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const repo = yield* WorkflowRepo
    const publishGate = yield* makePublishGateCheck
    const modelSettings = yield* ModelSettings
    const llm = yield* LlmGenerator
    const recordings = yield* RecordingCatalog
    const tools = yield* Tools
    const documents = yield* DocumentCatalog
    const credentials = yield* Credentials
    const triggerPathConflict = yield* makeTriggerPathCheck

    /** The credentials among `uuids` that are the organization's. */
    const existingCredentials = (principal: Principal, uuids: ReadonlySet<string>) =>
      Effect.forEach(
        uuids,
        (uuid) =>
          credentials.forRequest(principal.organizationId, uuid).pipe(
            Effect.map((found) => (Option.isSome(found) ? [uuid] : []))
          )
      ).pipe(Effect.map((found) => new Set(found.flat())))

    /**
     * Full validation, with the clips, tools and knowledge-base documents the definition names
     * looked up in the organization's libraries.
     */
    const fullyValidated = (principal: Principal, definition: unknown) =>
      Effect.all({
        recordingIds: recordings.existing(principal.organizationId, definitionRecordingIds(definition)),
        tools: tools.references(principal.organizationId, definitionToolUuids(definition)),
        documents: documents.existing(principal.organizationId, definitionDocumentUuids(definition)),
        credentials: existingCredentials(principal, definitionCredentialUuids(definition))
      }).pipe(Effect.map((found) => validateDefinition(definition, found)))

    /** A pre-call fetch must name an active HTTP API tool of the organization. */
    const preCallToolRefusal = (
      principal: Principal,
      configurations: Readonly<Record<string, unknown>> | null | undefined
    ) =>
      Effect.gen(function*() {
        const fetch = preCallFetchOf(configurations ?? null)
        if (fetch === null) return null
        const tool = (yield* tools.runnable(principal.organizationId, new Set([fetch.tool_uuid]))).get(fetch.tool_uuid)
        return tool?.definition.type === "http_api" ? null : ValidationFailed.single(
          ["body", "workflow_configurations", "pre_call_fetch", "tool_uuid"],
          `"${fetch.tool_uuid}" is not an active HTTP API tool of this organization`
        )
      })

    /** A voicemail message left as a recording must name one of the organization's clips. */
    const voicemailRecordingRefusal = (
      principal: Principal,
      configurations: Readonly<Record<string, unknown>> | null | undefined
    ) =>
      Effect.gen(function*() {
        const id = voicemailPolicy(configurations).messageRecordingId
        if (id === null || (yield* recordings.existing(principal.organizationId, [id])).has(id)) return null
        return ValidationFailed.single(
          ["body", "workflow_configurations", "voicemail", "message_recording_id"],
          `"${id}" is not a recording of this organization; upload it with POST /api/v1/workflow-recordings first`
        )
      })

    /** Configurations that name what the organization does not have, as a 422; none: null. */
    const referenceRefusal = (
      principal: Principal,
      configurations: Readonly<Record<string, unknown>> | null | undefined
    ) =>
      Effect.flatMap(
        preCallToolRefusal(principal, configurations),
        (refused) => refused === null ? voicemailRecordingRefusal(principal, configurations) : Effect.succeed(refused)
      )

    const viewOf = (principal: Principal, id: WorkflowId) =>
      repo.find(principal.organizationId, id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(workflowNotFound(id)), onSome: Effect.succeed }))
      )

    /** Locks the workflow row for the rest of the transaction; another organization's id is NotFound. */
    const lockWorkflow = (principal: Principal, id: WorkflowId) =>
      repo.lock(principal.organizationId, id).pipe(
        Effect.flatMap(Option.match({ onNone: () => Effect.fail(workflowNotFound(id)), onSome: Effect.succeed }))
      )

    const created = (principal: Principal, record: Omit<WorkflowRecord, "organizationId" | "createdBy">) =>
      repo.insert({ ...record, organizationId: principal.organizationId, createdBy: principal.userId }).pipe(
        Effect.flatMap((id) => viewOf(principal, id)),
        Effect.orDie
      )

    const createFromDefinition = Effect.fn("Workflows.createFromDefinition")(
      function*(principal: Principal, input: NewWorkflow) {
        const { problems } = yield* fullyValidated(principal, input.workflow_definition)
        if (problems.length > 0) {
          return yield* graphRefusal(problems, `The workflow definition cannot run: ${problems.length} problem(s)`)
        }
        const qa = qaNodeSetting(input.workflow_definition)
        if (qa._tag === "Refused") return yield* qaNodeRefusal(qa.problems)
        const pathTaken = yield* triggerPathConflict(principal.organizationId, null, input.workflow_definition)
        if (pathTaken !== null) return yield* pathTaken
        const configurations = withQaNodeSetting(input.workflow_configurations ?? {}, qa)
        const refused = configurationRefusal(configurations) ?? (yield* referenceRefusal(principal, configurations))
        if (refused !== null) return yield* refused
        return yield* created(principal, {
          name: input.name,
          definition: input.workflow_definition,
          templateContextVariables: input.template_context_variables ?? {},
          configurations,
          dispositionCodes: input.call_disposition_codes ?? []
        })
      }
    )

    const createFromTemplate = Effect.fn("Workflows.createFromTemplate")(
      function*(principal: Principal, request: TemplateRequest) {
        const connection = yield* modelSettings.llmFor(principal.organizationId)
        if (Option.isNone(connection)) {
          return yield* ValidationFailed.single(
            ["body"],
            "No LLM is configured for this organization; set one with PUT /api/v1/organizations/model-configurations",
            "llm_not_configured"
          )
        }
        const starter = yield* generateStarterWorkflow(connection.value, request).pipe(
          Effect.provideService(LlmGenerator, llm)
        )
        return yield* created(principal, {
          name: starter.name.slice(0, NAME_MAX),
          definition: starter.definition,
          templateContextVariables: {},
          configurations: {},
          dispositionCodes: starter.dispositionCodes
        })
      }
    )

    const list = Effect.fn("Workflows.list")(
      (principal: Principal, statuses: ReadonlyArray<"active" | "archived">) =>
        repo.list(principal.organizationId, statuses)
    )

    const page = Effect.fn("Workflows.page")(
      (principal: Principal, page: number, pageSize: number) =>
        repo.page(principal.organizationId, { limit: pageSize, offset: (page - 1) * pageSize })
    )

    const get = Effect.fn("Workflows.get")((principal: Principal, id: WorkflowId) => viewOf(principal, id))

    const update = Effect.fn("Workflows.update")(function*(principal: Principal, id: WorkflowId, edit: WorkflowEdit) {
      if (edit.workflow_definition !== undefined) {
        const blocking = structureProblems(validateDefinition(edit.workflow_definition).problems)
        if (blocking.length > 0) {
          return yield* graphRefusal(blocking, "The workflow definition is not a graph that can be saved")
        }
      }
      const qa = qaNodeSetting(edit.workflow_definition)
      if (qa._tag === "Refused") return yield* qaNodeRefusal(qa.problems)
      if (edit.workflow_definition !== undefined) {
        const pathTaken = yield* triggerPathConflict(principal.organizationId, id, edit.workflow_definition)
        if (pathTaken !== null) return yield* pathTaken
      }
      // A saved qa node wins over the setting stored before; one sent beside it in the same request wins over the node.
      const configurations = qa._tag !== "Setting"
        ? edit.workflow_configurations
        : edit.workflow_configurations !== undefined
        ? withQaNodeSetting(edit.workflow_configurations, qa)
        : { ...(yield* viewOf(principal, id)).workflow_configurations, quality_review: qa.setting }
      const refused = configurationRefusal(configurations) ?? (yield* referenceRefusal(principal, configurations))
      if (refused !== null) return yield* refused
      yield* sql.withTransaction(
        Effect.zipRight(
          lockWorkflow(principal, id),
          repo.saveDraft(id, configurations === undefined ? edit : { ...edit, workflow_configurations: configurations })
        )
      )
      return yield* viewOf(principal, id)
    }, Effect.catchTag("SqlError", Effect.die))

    const publish = Effect.fn("Workflows.publish")(function*(principal: Principal, id: WorkflowId) {
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* lockWorkflow(principal, id)
        const draft = yield* repo.draft(id)
        if (Option.isNone(draft)) {
          return yield* new Conflict({
            message: `Workflow ${id} has no draft to publish; save changes with PUT /api/v1/workflow/${id} first`
          })
        }
        const { problems } = yield* fullyValidated(principal, draft.value.workflow_definition)
        if (problems.length > 0) {
          return yield* graphRefusal(problems, `The draft cannot be published: ${problems.length} problem(s)`)
        }
        const pathTaken = yield* triggerPathConflict(principal.organizationId, id, draft.value.workflow_definition)
        if (pathTaken !== null) return yield* pathTaken
        if (publishRequiresTestsSetting.isOn(draft.value.workflow_configurations)) {
          const refusal = yield* publishGate(principal.organizationId, id)
          if (refusal !== null) return yield* new Conflict({ message: refusal })
        }
        yield* repo.publishDraft(id, draft.value.id)
      }))
      return yield* viewOf(principal, id)
    }, Effect.catchTag("SqlError", Effect.die))

    const versions = Effect.fn("Workflows.versions")(function*(principal: Principal, id: WorkflowId) {
      yield* viewOf(principal, id)
      return yield* repo.versions(id)
    })

    const validate = Effect.fn("Workflows.validate")(function*(principal: Principal, id: WorkflowId) {
      const workflow = yield* viewOf(principal, id)
      const { problems } = yield* fullyValidated(principal, workflow.workflow_definition)
      return {
        is_valid: problems.length === 0,
        version_number: workflow.version_number ?? 0,
        version_status: workflow.version_status ?? "draft",
        errors: problems.map(({ field, id, kind, message, rule }) => ({ kind, id, field, rule, message }))
      }
    })

    const setStatus = Effect.fn("Workflows.setStatus")(
      function*(principal: Principal, id: WorkflowId, status: "active" | "archived") {
        if (!(yield* repo.setStatus(principal.organizationId, id, status))) return yield* workflowNotFound(id)
        return yield* viewOf(principal, id)
      }
    )

    const duplicate = Effect.fn("Workflows.duplicate")(function*(principal: Principal, id: WorkflowId) {
      const copyId = yield* sql.withTransaction(Effect.gen(function*() {
        const source = yield* lockWorkflow(principal, id)
        return yield* repo.copy(source, {
          organizationId: principal.organizationId,
          createdBy: principal.userId,
          name: `${source.name.slice(0, NAME_MAX - 7)} (copy)`
        })
      }))
      return yield* viewOf(principal, copyId).pipe(Effect.catchTag("NotFound", Effect.die))
    }, Effect.catchTag("SqlError", Effect.die))

    return Workflows.of({
      createFromDefinition,
      createFromTemplate,
      list,
      page,
      get,
      update,
      publish,
      versions,
      validate,
      setStatus,
      duplicate
    })
  })
)
