import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import * as crypto from "node:crypto"
import { LlmGenerator } from "../../services/LlmGenerator.ts"
import { ModelSettings } from "../../services/ModelSettings.ts"
import { RecordingCatalog } from "../../services/Recordings.ts"
import { type JsonObject, type NewWorkflow, type WorkflowEdit, Workflows } from "../../services/Workflows.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import type { GraphProblem } from "../../src/graph/problem.ts"
import type { TemplateRequest } from "../../src/graph/templatePrompt.ts"
import { structureProblems, validateDefinition } from "../../src/graph/validation.ts"
import { definitionRecordingIds } from "../../src/recordings/recordingReferences.ts"
import { generateStarterWorkflow } from "./templateGeneration.ts"
import { selectWorkflows, toVersionView, toView, type VersionRow } from "./workflowQueries.ts"

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

const json = (value: unknown) => JSON.stringify(value)

export const WorkflowsLive = Layer.effect(
  Workflows,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const modelSettings = yield* ModelSettings
    const llm = yield* LlmGenerator
    const recordings = yield* RecordingCatalog

    /** Full validation, with the clips the definition names looked up in the organization's library. */
    const fullyValidated = (principal: Principal, definition: unknown) =>
      Effect.map(
        recordings.existing(principal.organizationId, definitionRecordingIds(definition)),
        (recordingIds) => validateDefinition(definition, { recordingIds })
      )

    const viewOf = (principal: Principal, id: number) =>
      selectWorkflows(principal.organizationId, (sql) => sql`w.id = ${id}`).pipe(
        Effect.provideService(SqlClient.SqlClient, sql),
        Effect.flatMap((
          rows
        ) => (rows[0] ? Effect.succeed(toView(rows[0])) : Effect.fail(new NotFound({ resource: "Workflow", id }))))
      )

    /** Locks the workflow row for the rest of the transaction; another organization's id is NotFound. */
    const lockWorkflow = (principal: Principal, id: number) =>
      sql<{ id: number; name: string; call_disposition_codes: JsonObject }>`
        SELECT id, name, call_disposition_codes FROM workflows
        WHERE id = ${id} AND organization_id = ${principal.organizationId} FOR UPDATE`.pipe(
        Effect.flatMap((
          rows
        ) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Workflow", id }))))
      )

    const insertWorkflow = (
      principal: Principal,
      input: {
        name: string
        definition: unknown
        templateContextVariables: JsonObject
        configurations: JsonObject
        dispositionCodes: ReadonlyArray<string>
      }
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const [workflow] = yield* sql<{ id: number }>`
          INSERT INTO workflows (organization_id, created_by, workflow_uuid, name, call_disposition_codes)
          VALUES (${principal.organizationId}, ${principal.userId}, ${crypto.randomUUID()}, ${input.name},
                  ${json({ disposition_codes: input.dispositionCodes })}::jsonb)
          RETURNING id`
        yield* sql`
          INSERT INTO workflow_definitions
            (workflow_id, version_number, version_status, workflow_definition, template_context_variables, workflow_configurations, published_at)
          VALUES (${workflow!.id}, 1, 'published', ${json(input.definition)}::jsonb, ${
          json(input.templateContextVariables)
        }::jsonb,
                  ${json(input.configurations)}::jsonb, now())`
        return workflow!.id
      }))

    const createFromDefinition = Effect.fn("Workflows.createFromDefinition")(
      function*(principal: Principal, input: NewWorkflow) {
        const { problems } = yield* fullyValidated(principal, input.workflow_definition)
        if (problems.length > 0) {
          return yield* graphRefusal(problems, `The workflow definition cannot run: ${problems.length} problem(s)`)
        }
        const id = yield* insertWorkflow(principal, {
          name: input.name,
          definition: input.workflow_definition,
          templateContextVariables: input.template_context_variables ?? {},
          configurations: input.workflow_configurations ?? {},
          dispositionCodes: input.call_disposition_codes ?? []
        })
        return yield* viewOf(principal, id).pipe(Effect.orDie)
      },
      Effect.catchTag("SqlError", Effect.die)
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
        const id = yield* insertWorkflow(principal, {
          name: starter.name.slice(0, NAME_MAX),
          definition: starter.definition,
          templateContextVariables: {},
          configurations: {},
          dispositionCodes: starter.dispositionCodes
        })
        return yield* viewOf(principal, id).pipe(Effect.orDie)
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const list = Effect.fn("Workflows.list")(
      function*(principal: Principal, statuses: ReadonlyArray<"active" | "archived">) {
        const rows = yield* selectWorkflows(
          principal.organizationId,
          (sql) => (statuses.length > 0 ? sql`w.status IN ${sql.in(statuses)}` : sql`true`)
        )
        return rows.map(toView)
      },
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.orDie
    )

    const page = Effect.fn("Workflows.page")(
      function*(principal: Principal, page: number, pageSize: number) {
        const [count] = yield* sql<{ total: number }>`
        SELECT count(*) AS total FROM workflows WHERE organization_id = ${principal.organizationId}`
        const rows = yield* selectWorkflows(principal.organizationId, (sql) => sql`true`, {
          limit: pageSize,
          offset: (page - 1) * pageSize
        })
        return { items: rows.map(toView), total: count?.total ?? 0 }
      },
      Effect.provideService(SqlClient.SqlClient, sql),
      Effect.orDie
    )

    const get = Effect.fn("Workflows.get")(
      (principal: Principal, id: number) => viewOf(principal, id),
      Effect.catchTag("SqlError", Effect.die)
    )

    const update = Effect.fn("Workflows.update")(function*(principal: Principal, id: number, edit: WorkflowEdit) {
      if (edit.workflow_definition !== undefined) {
        const blocking = structureProblems(validateDefinition(edit.workflow_definition).problems)
        if (blocking.length > 0) {
          return yield* graphRefusal(blocking, "The workflow definition is not a graph that can be saved")
        }
      }
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* lockWorkflow(principal, id)
        if (edit.name !== undefined) yield* sql`UPDATE workflows SET name = ${edit.name} WHERE id = ${id}`
        const touchesVersion = edit.workflow_definition !== undefined ||
          edit.template_context_variables !== undefined ||
          edit.workflow_configurations !== undefined
        if (touchesVersion) {
          const [draft] = yield* sql<{ id: number }>`
            SELECT id FROM workflow_definitions WHERE workflow_id = ${id} AND version_status = 'draft'`
          const draftId = draft?.id ?? (yield* sql<{ id: number }>`
            INSERT INTO workflow_definitions
              (workflow_id, version_number, version_status, workflow_definition, template_context_variables, workflow_configurations)
            SELECT ${id}, (SELECT max(version_number) + 1 FROM workflow_definitions WHERE workflow_id = ${id}), 'draft',
                   workflow_definition, template_context_variables, workflow_configurations
            FROM workflow_definitions WHERE workflow_id = ${id} AND version_status = 'published'
            RETURNING id`)[0]!.id
          yield* sql`
            UPDATE workflow_definitions SET
              workflow_definition = coalesce(${
            edit.workflow_definition === undefined ? null : json(edit.workflow_definition)
          }::jsonb, workflow_definition),
              template_context_variables = coalesce(${
            edit.template_context_variables === undefined ? null : json(edit.template_context_variables)
          }::jsonb, template_context_variables),
              workflow_configurations = coalesce(${
            edit.workflow_configurations === undefined ? null : json(edit.workflow_configurations)
          }::jsonb, workflow_configurations)
            WHERE id = ${draftId}`
        }
        yield* sql`UPDATE workflows SET updated_at = now() WHERE id = ${id}`
      }))
      return yield* viewOf(principal, id)
    }, Effect.catchTag("SqlError", Effect.die))

    const publish = Effect.fn("Workflows.publish")(function*(principal: Principal, id: number) {
      yield* sql.withTransaction(Effect.gen(function*() {
        yield* lockWorkflow(principal, id)
        const [draft] = yield* sql<{ id: number; workflow_definition: unknown }>`
          SELECT id, workflow_definition FROM workflow_definitions WHERE workflow_id = ${id} AND version_status = 'draft'`
        if (!draft) {
          return yield* new Conflict({
            message: `Workflow ${id} has no draft to publish; save changes with PUT /api/v1/workflow/${id} first`
          })
        }
        const { problems } = yield* fullyValidated(principal, draft.workflow_definition)
        if (problems.length > 0) {
          return yield* graphRefusal(problems, `The draft cannot be published: ${problems.length} problem(s)`)
        }
        yield* sql`UPDATE workflow_definitions SET version_status = 'archived' WHERE workflow_id = ${id} AND version_status = 'published'`
        yield* sql`UPDATE workflow_definitions SET version_status = 'published', published_at = now() WHERE id = ${draft.id}`
        yield* sql`UPDATE workflows SET updated_at = now() WHERE id = ${id}`
      }))
      return yield* viewOf(principal, id)
    }, Effect.catchTag("SqlError", Effect.die))

    const versions = Effect.fn("Workflows.versions")(function*(principal: Principal, id: number) {
      yield* viewOf(principal, id)
      const rows = yield* sql<VersionRow>`
        SELECT id, version_number, version_status, workflow_definition, template_context_variables, workflow_configurations,
               created_at, published_at
        FROM workflow_definitions WHERE workflow_id = ${id} ORDER BY version_number DESC`
      return rows.map(toVersionView)
    }, Effect.catchTag("SqlError", Effect.die))

    const validate = Effect.fn("Workflows.validate")(function*(principal: Principal, id: number) {
      const workflow = yield* viewOf(principal, id)
      const { problems } = yield* fullyValidated(principal, workflow.workflow_definition)
      return {
        is_valid: problems.length === 0,
        version_number: workflow.version_number ?? 0,
        version_status: workflow.version_status ?? "draft",
        errors: problems.map(({ field, id, kind, message, rule }) => ({ kind, id, field, rule, message }))
      }
    }, Effect.catchTag("SqlError", Effect.die))

    const setStatus = Effect.fn("Workflows.setStatus")(
      function*(principal: Principal, id: number, status: "active" | "archived") {
        const rows = yield* sql`
        UPDATE workflows SET status = ${status}, updated_at = now()
        WHERE id = ${id} AND organization_id = ${principal.organizationId} RETURNING id`
        if (rows.length === 0) return yield* new NotFound({ resource: "Workflow", id })
        return yield* viewOf(principal, id)
      },
      Effect.catchTag("SqlError", Effect.die)
    )

    const duplicate = Effect.fn("Workflows.duplicate")(function*(principal: Principal, id: number) {
      const copyId = yield* sql.withTransaction(Effect.gen(function*() {
        const source = yield* lockWorkflow(principal, id)
        const [copy] = yield* sql<{ id: number }>`
          INSERT INTO workflows (organization_id, created_by, workflow_uuid, name, call_disposition_codes)
          VALUES (${principal.organizationId}, ${principal.userId}, ${crypto.randomUUID()},
                  ${`${source.name.slice(0, NAME_MAX - 7)} (copy)`}, ${json(source.call_disposition_codes)}::jsonb)
          RETURNING id`
        // The copy starts its own history: the published version as v1, an open draft as v2.
        yield* sql`
          INSERT INTO workflow_definitions
            (workflow_id, version_number, version_status, workflow_definition, template_context_variables, workflow_configurations, published_at)
          SELECT ${copy!.id}, CASE version_status WHEN 'published' THEN 1 ELSE 2 END, version_status,
                 workflow_definition, template_context_variables, workflow_configurations,
                 CASE version_status WHEN 'published' THEN now() END
          FROM workflow_definitions WHERE workflow_id = ${id} AND version_status IN ('published', 'draft')`
        return copy!.id
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
