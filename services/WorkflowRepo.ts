import { Context, type Effect, type Option } from "effect"
import type { OrganizationId, WorkflowId } from "../src/domain/ids.ts"
import type { VersionStatus, WorkflowStatus } from "../src/workflows/workflowRecord.ts"
import type { JsonObject, WorkflowEdit, WorkflowVersionView, WorkflowView } from "./Workflows.ts"

/** An agent's first version, stored published as it is. */
export interface WorkflowRecord {
  readonly organizationId: OrganizationId
  readonly createdBy: number
  readonly name: string
  readonly definition: unknown
  readonly templateContextVariables: JsonObject
  readonly configurations: JsonObject
  readonly dispositionCodes: ReadonlyArray<string>
}

/** A workflow row locked for the rest of the transaction. */
export interface LockedWorkflow {
  readonly id: WorkflowId
  readonly name: string
  readonly call_disposition_codes: JsonObject
}

/** A version a new conversation may run (a draft or the published version), with its workflow's status. */
export interface StartableVersion {
  readonly workflow_status: WorkflowStatus
  readonly definition_id: number
  readonly version_number: number
  readonly version_status: Exclude<VersionStatus, "archived">
  readonly workflow_definition: unknown
  readonly template_context_variables: Record<string, unknown> | null
  readonly workflow_configurations: Record<string, unknown> | null
  readonly disposition_codes: ReadonlyArray<unknown>
}

/**
 * The repository of agent definitions: workflows and their versions, as stored. It keeps no rule
 * of its own (validation and what may be published are `Workflows`'); writes that belong together
 * run in the caller's transaction. Database failures are defects.
 */
export interface WorkflowRepoShape {
  /** Stores a workflow with its first version published; answers its id. */
  readonly insert: (record: WorkflowRecord) => Effect.Effect<WorkflowId>
  /** A workflow with its working version (the draft when there is one, else the published version). */
  readonly find: (organizationId: OrganizationId, id: WorkflowId) => Effect.Effect<Option.Option<WorkflowView>>
  /** Workflows with any of `statuses` (all of them when empty), newest first. */
  readonly list: (
    organizationId: OrganizationId,
    statuses: ReadonlyArray<WorkflowStatus>
  ) => Effect.Effect<ReadonlyArray<WorkflowView>>
  readonly page: (
    organizationId: OrganizationId,
    page: { readonly limit: number; readonly offset: number }
  ) => Effect.Effect<{ readonly items: ReadonlyArray<WorkflowView>; readonly total: number }>
  /** Locks the workflow row for the rest of the caller's transaction. */
  readonly lock: (organizationId: OrganizationId, id: WorkflowId) => Effect.Effect<Option.Option<LockedWorkflow>>
  /** Applies an edit: the name to the workflow, the rest to its single draft (created from the published version). */
  readonly saveDraft: (id: WorkflowId, edit: WorkflowEdit) => Effect.Effect<void>
  readonly draft: (
    id: WorkflowId
  ) => Effect.Effect<
    Option.Option<{
      readonly id: number
      readonly workflow_definition: unknown
      readonly workflow_configurations: Readonly<Record<string, unknown>> | null
    }>
  >
  /** Publishes the draft and archives the version published before it. */
  readonly publishDraft: (id: WorkflowId, draftId: number) => Effect.Effect<void>
  /** Every version, newest first. */
  readonly versions: (id: WorkflowId) => Effect.Effect<ReadonlyArray<WorkflowVersionView>>
  /** Answers false when the organization has no such workflow. */
  readonly setStatus: (organizationId: OrganizationId, id: WorkflowId, status: WorkflowStatus) => Effect.Effect<boolean>
  /**
   * A new workflow with `source`'s published version as its v1 and an open draft as v2; answers its id.
   * `source` is locked by the caller's transaction.
   */
  readonly copy: (
    source: LockedWorkflow,
    target: { readonly organizationId: OrganizationId; readonly createdBy: number; readonly name: string }
  ) => Effect.Effect<WorkflowId>
  /** The versions a conversation may start on; `exists` tells an unknown workflow from one without any. */
  readonly startableVersions: (
    organizationId: OrganizationId,
    workflowId: WorkflowId
  ) => Effect.Effect<{ readonly exists: boolean; readonly versions: ReadonlyArray<StartableVersion> }>
  /** One version's definition, by its id. */
  readonly definition: (definitionId: number) => Effect.Effect<Option.Option<unknown>>
}

export class WorkflowRepo extends Context.Tag("talkgraph/WorkflowRepo")<WorkflowRepo, WorkflowRepoShape>() {}
