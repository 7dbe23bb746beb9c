import { SqlClient } from "@effect/sql"
import { Effect, Layer, Option } from "effect"
import * as crypto from "node:crypto"
import {
  type LockedWorkflow,
  type StartableVersion,
  type WorkflowRecord,
  WorkflowRepo
} from "../../services/WorkflowRepo.ts"
import type { WorkflowEdit, WorkflowVersionView } from "../../services/Workflows.ts"
import type { OrganizationId, WorkflowId } from "../../src/domain/ids.ts"
import type { WorkflowStatus } from "../../src/workflows/workflowRecord.ts"
import { selectWorkflows, toView } from "./workflowQueries.ts"

const json = (value: unknown) => JSON.stringify(value)

export const WorkflowRepoLive = Layer.effect(
  WorkflowRepo,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const withSql = Effect.provideService(SqlClient.SqlClient, sql)

    const insert = Effect.fn("WorkflowRepo.insert")(function*(record: WorkflowRecord) {
      return yield* sql.withTransaction(Effect.gen(function*() {
        const [workflow] = yield* sql<{ id: WorkflowId }>`
          INSERT INTO workflows (organization_id, created_by, workflow_uuid, name, call_disposition_codes)
          VALUES (${record.organizationId}, ${record.createdBy}, ${crypto.randomUUID()}, ${record.name},
                  ${json({ disposition_codes: record.dispositionCodes })}::jsonb)
          RETURNING id`
        yield* sql`
          INSERT INTO workflow_definitions
            (workflow_id, version_number, version_status, workflow_definition, template_context_variables, workflow_configurations, published_at)
          VALUES (${workflow!.id}, 1, 'published', ${json(record.definition)}::jsonb, ${
          json(record.templateContextVariables)
        }::jsonb,
                  ${json(record.configurations)}::jsonb, now())`
        return workflow!.id
      }))
    }, Effect.orDie)

    const find = Effect.fn("WorkflowRepo.find")(
      function*(organizationId: OrganizationId, id: WorkflowId) {
        const rows = yield* selectWorkflows(organizationId, (sql) => sql`w.id = ${id}`)
        return Option.map(Option.fromNullable(rows[0]), toView)
      },
      withSql,
      Effect.orDie
    )

    const list = Effect.fn("WorkflowRepo.list")(
      function*(organizationId: OrganizationId, statuses: ReadonlyArray<WorkflowStatus>) {
        const rows = yield* selectWorkflows(
          organizationId,
          (sql) => (statuses.length > 0 ? sql`w.status IN ${sql.in(statuses)}` : sql`true`)
        )
        return rows.map(toView)
      },
      withSql,
      Effect.orDie
    )

    const page = Effect.fn("WorkflowRepo.page")(
      function*(organizationId: OrganizationId, page: { readonly limit: number; readonly offset: number }) {
        const [count] = yield* sql<{ total: number }>`
        SELECT count(*) AS total FROM workflows WHERE organization_id = ${organizationId}`
        const rows = yield* selectWorkflows(organizationId, (sql) => sql`true`, page)
        return { items: rows.map(toView), total: count?.total ?? 0 }
      },
      withSql,
      Effect.orDie
    )

    const lock = Effect.fn("WorkflowRepo.lock")(function*(organizationId: OrganizationId, id: WorkflowId) {
      const rows = yield* sql<LockedWorkflow>`
        SELECT id, name, call_disposition_codes FROM workflows
        WHERE id = ${id} AND organization_id = ${organizationId} FOR UPDATE`
      return Option.fromNullable(rows[0])
    }, Effect.orDie)

    const saveDraft = Effect.fn("WorkflowRepo.saveDraft")(function*(id: WorkflowId, edit: WorkflowEdit) {
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
    }, Effect.orDie)

    const draft = Effect.fn("WorkflowRepo.draft")(function*(id: WorkflowId) {
      const rows = yield* sql<
        { id: number; workflow_definition: unknown; workflow_configurations: Record<string, unknown> | null }
      >`
        SELECT id, workflow_definition, workflow_configurations FROM workflow_definitions WHERE workflow_id = ${id} AND version_status = 'draft'`
      return Option.fromNullable(rows[0])
    }, Effect.orDie)

    const publishDraft = Effect.fn("WorkflowRepo.publishDraft")(function*(id: WorkflowId, draftId: number) {
      yield* sql`UPDATE workflow_definitions SET version_status = 'archived' WHERE workflow_id = ${id} AND version_status = 'published'`
      yield* sql`UPDATE workflow_definitions SET version_status = 'published', published_at = now() WHERE id = ${draftId}`
      yield* sql`UPDATE workflows SET updated_at = now() WHERE id = ${id}`
    }, Effect.orDie)

    const versions = Effect.fn("WorkflowRepo.versions")(function*(id: WorkflowId) {
      return yield* sql<WorkflowVersionView>`
        SELECT id, version_number, version_status, workflow_definition, template_context_variables, workflow_configurations,
               created_at, published_at
        FROM workflow_definitions WHERE workflow_id = ${id} ORDER BY version_number DESC`
    }, Effect.orDie)

    const setStatus = Effect.fn("WorkflowRepo.setStatus")(
      function*(organizationId: OrganizationId, id: WorkflowId, status: WorkflowStatus) {
        const rows = yield* sql`
        UPDATE workflows SET status = ${status}, updated_at = now()
        WHERE id = ${id} AND organization_id = ${organizationId} RETURNING id`
        return rows.length > 0
      },
      Effect.orDie
    )

    const copy = Effect.fn("WorkflowRepo.copy")(function*(
      source: LockedWorkflow,
      target: { readonly organizationId: OrganizationId; readonly createdBy: number; readonly name: string }
    ) {
      const [copy] = yield* sql<{ id: WorkflowId }>`
        INSERT INTO workflows (organization_id, created_by, workflow_uuid, name, call_disposition_codes)
        VALUES (${target.organizationId}, ${target.createdBy}, ${crypto.randomUUID()},
                ${target.name}, ${json(source.call_disposition_codes)}::jsonb)
        RETURNING id`
      // The copy starts its own history: the published version as v1, an open draft as v2. Its
      // trigger nodes get paths of their own (a path places calls for one agent): a UUID derived
      // from the old path and a salt of this copy, so the draft and the published copy still agree.
      const salt = crypto.randomUUID()
      yield* sql`
        INSERT INTO workflow_definitions
          (workflow_id, version_number, version_status, workflow_definition, template_context_variables, workflow_configurations, published_at)
        SELECT ${copy!.id}, CASE version_status WHEN 'published' THEN 1 ELSE 2 END, version_status,
               CASE WHEN jsonb_typeof(workflow_definition -> 'nodes') = 'array' THEN jsonb_set(
                 workflow_definition, '{nodes}',
                 COALESCE((SELECT jsonb_agg(CASE WHEN t.n ->> 'type' = 'trigger' AND t.n -> 'data' ? 'trigger_path'
                   THEN jsonb_set(t.n, '{data,trigger_path}',
                                  to_jsonb(md5((t.n -> 'data' ->> 'trigger_path') || ${salt})::uuid::text))
                   ELSE t.n END ORDER BY t.ord)
                   FROM jsonb_array_elements(workflow_definition -> 'nodes') WITH ORDINALITY AS t(n, ord)), '[]'::jsonb))
               ELSE workflow_definition END,
               template_context_variables, workflow_configurations,
               CASE version_status WHEN 'published' THEN now() END
        FROM workflow_definitions WHERE workflow_id = ${source.id} AND version_status IN ('published', 'draft')`
      return copy!.id
    }, Effect.orDie)

    const startableVersions = Effect.fn("WorkflowRepo.startableVersions")(
      function*(organizationId: OrganizationId, workflowId: WorkflowId) {
        const versions = yield* sql<StartableVersion>`
          SELECT w.status AS workflow_status, d.id AS definition_id, d.version_number, d.version_status,
                 d.workflow_definition, d.template_context_variables, d.workflow_configurations,
                 COALESCE(w.call_disposition_codes->'disposition_codes', '[]'::jsonb) AS disposition_codes
          FROM workflows w JOIN workflow_definitions d ON d.workflow_id = w.id
          WHERE w.id = ${workflowId} AND w.organization_id = ${organizationId}
            AND d.version_status IN ('draft', 'published')`
        if (versions.length > 0) return { exists: true, versions }
        const [exists] =
          yield* sql`SELECT 1 FROM workflows WHERE id = ${workflowId} AND organization_id = ${organizationId}`
        return { exists: exists !== undefined, versions }
      },
      Effect.orDie
    )

    const definition = Effect.fn("WorkflowRepo.definition")(function*(definitionId: number) {
      const rows = yield* sql<{ workflow_definition: unknown }>`
        SELECT workflow_definition FROM workflow_definitions WHERE id = ${definitionId}`
      return Option.map(Option.fromNullable(rows[0]), (row) => row.workflow_definition)
    }, Effect.orDie)

    return WorkflowRepo.of({
      insert,
      find,
      list,
      page,
      lock,
      saveDraft,
      draft,
      publishDraft,
      versions,
      setStatus,
      copy,
      startableVersions,
      definition
    })
  })
)
