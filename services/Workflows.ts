import { Context, type Effect } from "effect"
import type { Conflict, NotFound, UpstreamFailed, ValidationFailed } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type { TemplateRequest } from "../src/graph/templatePrompt.ts"

export type JsonObject = { readonly [key: string]: unknown }

/**
 * A workflow with its working version: the draft when one exists, else the published version.
 * Fields are named as in the spec's WorkflowResponse.
 */
export interface WorkflowView {
  readonly id: number
  readonly name: string
  readonly status: "active" | "archived"
  readonly created_at: Date
  readonly updated_at: Date
  readonly workflow_definition: JsonObject
  readonly current_definition_id: number | null
  readonly template_context_variables: JsonObject | null
  readonly call_disposition_codes: { readonly disposition_codes: ReadonlyArray<string> }
  readonly total_runs: number
  readonly workflow_configurations: JsonObject | null
  readonly version_number: number | null
  readonly version_status: "draft" | "published" | "archived" | null
  readonly workflow_uuid: string
}

export interface WorkflowVersionView {
  readonly id: number
  readonly version_number: number
  readonly version_status: "draft" | "published" | "archived"
  readonly workflow_definition: JsonObject
  readonly template_context_variables: JsonObject
  readonly workflow_configurations: JsonObject
  readonly created_at: Date
  readonly published_at: Date | null
}

export interface ValidationReportProblem {
  readonly kind: "workflow" | "node" | "edge"
  readonly id: string | null
  readonly field: string | null
  readonly rule: string
  readonly message: string
}

export interface ValidationReport {
  readonly is_valid: boolean
  readonly version_number: number
  readonly version_status: "draft" | "published" | "archived"
  readonly errors: ReadonlyArray<ValidationReportProblem>
}

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
    statuses: ReadonlyArray<"active" | "archived">
  ) => Effect.Effect<ReadonlyArray<WorkflowView>>
  readonly page: (
    principal: Principal,
    page: number,
    pageSize: number
  ) => Effect.Effect<{ readonly items: ReadonlyArray<WorkflowView>; readonly total: number }>
  readonly get: (principal: Principal, id: number) => Effect.Effect<WorkflowView, NotFound>
  /** Edits the single draft, creating it from the published version when there is none. */
  readonly update: (
    principal: Principal,
    id: number,
    edit: WorkflowEdit
  ) => Effect.Effect<WorkflowView, NotFound | ValidationFailed>
  /** Validates the draft fully, publishes it and archives the previously published version. */
  readonly publish: (
    principal: Principal,
    id: number
  ) => Effect.Effect<WorkflowView, NotFound | ValidationFailed | Conflict>
  readonly versions: (principal: Principal, id: number) => Effect.Effect<ReadonlyArray<WorkflowVersionView>, NotFound>
  readonly validate: (principal: Principal, id: number) => Effect.Effect<ValidationReport, NotFound>
  readonly setStatus: (
    principal: Principal,
    id: number,
    status: "active" | "archived"
  ) => Effect.Effect<WorkflowView, NotFound>
  readonly duplicate: (principal: Principal, id: number) => Effect.Effect<WorkflowView, NotFound>
}

export class Workflows extends Context.Tag("talkgraph/Workflows")<Workflows, WorkflowsShape>() {}
