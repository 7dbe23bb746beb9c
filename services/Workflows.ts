import { Context, type Effect } from "effect"
import type { Conflict, NotFound, UpstreamFailed, ValidationFailed } from "../src/domain/errors.ts"
import type { WorkflowId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { TemplateRequest } from "../src/graph/templatePrompt.ts"
import type { Workflow, WorkflowStatus, WorkflowValidation, WorkflowVersion } from "../src/workflows/workflowRecord.ts"

export type JsonObject = { readonly [key: string]: unknown }

/** The workflow, its versions and a validation report are defined once, in src/workflows/workflowRecord.ts. */
export type WorkflowView = Workflow
export type WorkflowVersionView = WorkflowVersion
export type ValidationReport = WorkflowValidation

export interface NewWorkflow {
  readonly name: string
  readonly workflow_definition: unknown
  readonly template_context_variables?: JsonObject | undefined
  readonly workflow_configurations?: JsonObject | undefined
  readonly call_disposition_codes?: ReadonlyArray<string> | undefined
}

export interface WorkflowEdit {
  readonly name?: string | undefined
  readonly workflow_definition?: unknown
  readonly template_context_variables?: JsonObject | undefined
  readonly workflow_configurations?: JsonObject | undefined
}

/** Agents as versioned workflows, scoped to the caller's organization (others' answer NotFound). */
export interface WorkflowsShape {
  /** Validates fully and stores version 1 as published; a definition that cannot run is refused. */
  readonly createFromDefinition: (
    principal: Principal,
    input: NewWorkflow
  ) => Effect.Effect<WorkflowView, ValidationFailed>
  /** Generates the content with the organization's LLM; stores nothing unless it all succeeds. */
  readonly createFromTemplate: (
    principal: Principal,
    request: TemplateRequest
  ) => Effect.Effect<WorkflowView, ValidationFailed | UpstreamFailed>
  /** Workflows with any of `statuses` (all of them when empty), newest first. */
  readonly list: (
    principal: Principal,
    statuses: ReadonlyArray<WorkflowStatus>
  ) => Effect.Effect<ReadonlyArray<WorkflowView>>
  readonly page: (
    principal: Principal,
    page: number,
    pageSize: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<WorkflowView>; readonly total: number }>
  readonly get: (principal: Principal, id: WorkflowId) => Effect.Effect<WorkflowView, NotFound>
  /** Edits the single draft, creating it from the published version when there is none. */
  readonly update: (
    principal: Principal,
    id: WorkflowId,
    edit: WorkflowEdit
  ) => Effect.Effect<WorkflowView, NotFound | ValidationFailed>
  /** Validates the draft fully, publishes it and archives the previously published version. */
  readonly publish: (
    principal: Principal,
    id: WorkflowId
  ) => Effect.Effect<WorkflowView, NotFound | ValidationFailed | Conflict>
  readonly versions: (
    principal: Principal,
    id: WorkflowId
  ) => Effect.Effect<ReadonlyArray<WorkflowVersionView>, NotFound>
  readonly validate: (principal: Principal, id: WorkflowId) => Effect.Effect<ValidationReport, NotFound>
  readonly setStatus: (
    principal: Principal,
    id: WorkflowId,
    status: WorkflowStatus
  ) => Effect.Effect<WorkflowView, NotFound>
  readonly duplicate: (principal: Principal, id: WorkflowId) => Effect.Effect<WorkflowView, NotFound>
}

export class Workflows extends Context.Tag("talkgraph/Workflows")<Workflows, WorkflowsShape>() {}
