import { Schema } from "effect"
import { WorkflowId } from "../domain/ids.ts"
import { JsonObject, Timestamp } from "../domain/wireTypes.ts"

export const WorkflowStatus = Schema.Literal("active", "archived")
export type WorkflowStatus = typeof WorkflowStatus.Type

export const VersionStatus = Schema.Literal("draft", "published", "archived")
export type VersionStatus = typeof VersionStatus.Type

export const CallDispositionCodes = Schema.Struct({
  disposition_codes: Schema.Array(Schema.String)
}).annotations({ identifier: "CallDispositionCodes" })

/**
 * A workflow (an agent) with its working version: the draft when one exists, else the published
 * version. The one definition: Workflows' view is its type, the v1 WorkflowResponse and the v2
 * agent take their fields from it, and the row type derives from it.
 */
export const Workflow = Schema.Struct({
  id: WorkflowId,
  name: Schema.String,
  status: WorkflowStatus,
  created_at: Timestamp,
  updated_at: Timestamp,
  workflow_definition: JsonObject,
  current_definition_id: Schema.NullOr(Schema.Int),
  template_context_variables: Schema.NullOr(JsonObject),
  call_disposition_codes: CallDispositionCodes,
  total_runs: Schema.Int,
  workflow_configurations: Schema.NullOr(JsonObject),
  version_number: Schema.NullOr(Schema.Int),
  version_status: Schema.NullOr(VersionStatus),
  workflow_uuid: Schema.String
})
export type Workflow = typeof Workflow.Type

/** One version of a workflow (WorkflowVersionResponse). */
export const WorkflowVersion = Schema.Struct({
  id: Schema.Int,
  version_number: Schema.Int,
  version_status: VersionStatus,
  workflow_definition: JsonObject,
  template_context_variables: JsonObject,
  workflow_configurations: JsonObject,
  created_at: Timestamp,
  published_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "WorkflowVersionResponse" })
export type WorkflowVersion = typeof WorkflowVersion.Type

/** The spec has always described these as strings; the values are the literals. */
export const describedAsString = { jsonSchema: { type: "string" } } as const

/** Whether a workflow's working version can run, and each problem found (WorkflowValidationResponse). */
export const WorkflowValidation = Schema.Struct({
  is_valid: Schema.Boolean,
  version_number: Schema.Int,
  version_status: VersionStatus.annotations(describedAsString),
  errors: Schema.Array(Schema.Struct({
    kind: Schema.Literal("workflow", "node", "edge"),
    id: Schema.NullOr(Schema.String),
    field: Schema.NullOr(Schema.String),
    rule: Schema.String,
    message: Schema.String
  }))
}).annotations({ identifier: "WorkflowValidationResponse" })
export type WorkflowValidation = typeof WorkflowValidation.Type
