import { ParseResult, Schema } from "effect"
import { JsonObject } from "../../../src/domain/wireTypes.ts"
import {
  CallDispositionCodes,
  describedAsString,
  VersionStatus,
  Workflow,
  WorkflowStatus,
  WorkflowValidation,
  WorkflowVersion
} from "../../../src/workflows/workflowRecord.ts"
import { bodySchema, IdFromPath, pathSchema, querySchema } from "../../requestSchemas.ts"

const Name = Schema.String.pipe(
  Schema.trimmed({ message: () => "Name must not start or end with spaces" }),
  Schema.minLength(1),
  Schema.maxLength(200)
)

const RequiredText = (max: number) =>
  Schema.String.pipe(
    Schema.filter((text) => text.trim().length > 0, { message: () => "must not be empty" }),
    Schema.maxLength(max)
  )

const fields = Workflow.fields

/**
 * The spec's WorkflowResponse, field for field: the workflow's fields, with the looser types and
 * optional members the established platform documents (every one is always sent).
 */
export const WorkflowResponse = Schema.Struct({
  id: fields.id,
  name: fields.name,
  status: WorkflowStatus.annotations(describedAsString),
  created_at: fields.created_at,
  workflow_definition: fields.workflow_definition,
  current_definition_id: fields.current_definition_id,
  template_context_variables: Schema.optional(fields.template_context_variables),
  call_disposition_codes: Schema.optional(Schema.NullOr(CallDispositionCodes)),
  total_runs: Schema.optional(Schema.NullOr(fields.total_runs)),
  workflow_configurations: Schema.optional(fields.workflow_configurations),
  version_number: Schema.optional(fields.version_number),
  version_status: Schema.optional(Schema.NullOr(VersionStatus.annotations(describedAsString))),
  workflow_uuid: Schema.optional(Schema.NullOr(fields.workflow_uuid))
}).annotations({ identifier: "WorkflowResponse" })

/** A version and a validation report are defined once, in src/workflows/workflowRecord.ts. */
export const WorkflowVersionResponse = WorkflowVersion
export const WorkflowValidationResponse = WorkflowValidation

export const CreateWorkflowRequest = bodySchema("CreateWorkflow", {
  name: Name,
  workflow_definition: JsonObject,
  template_context_variables: Schema.optional(JsonObject),
  workflow_configurations: Schema.optional(JsonObject)
})

export const CreateWorkflowTemplateRequest = bodySchema("CreateWorkflowTemplate", {
  call_type: Schema.Literal("inbound", "outbound"),
  use_case: RequiredText(200),
  activity_description: RequiredText(4000)
})

export const UpdateWorkflowRequest = bodySchema("UpdateWorkflow", {
  name: Schema.optional(Name),
  workflow_definition: Schema.optional(JsonObject),
  template_context_variables: Schema.optional(JsonObject),
  workflow_configurations: Schema.optional(JsonObject)
})

export const UpdateWorkflowStatusRequest = bodySchema("UpdateWorkflowStatus", { status: WorkflowStatus })

const isWorkflowStatus = Schema.is(WorkflowStatus)

/**
 * One status or several, comma-separated (`active,archived`), as the established platform takes
 * them; an empty value is no filter. Every unknown value is named in the error.
 */
const WorkflowStatusList = Schema.transformOrFail(Schema.String, Schema.Array(WorkflowStatus), {
  strict: true,
  decode: (raw, _, ast) => {
    const requested = raw.trim() === "" ? [] : raw.split(",").map((part) => part.trim())
    const unknown = [...new Set(requested.filter((status) => !isWorkflowStatus(status)))]
    if (unknown.length > 0) {
      const named = unknown.map((status) => (status === "" ? "<empty>" : `"${status}"`)).join(", ")
      return ParseResult.fail(
        new ParseResult.Type(
          ast,
          raw,
          `Unknown workflow status ${named}: expected active, archived or both, comma-separated`
        )
      )
    }
    return ParseResult.succeed([...new Set(requested.filter(isWorkflowStatus))])
  },
  encode: (statuses) => ParseResult.succeed(statuses.join(","))
}).annotations({ jsonSchema: { type: "string", pattern: "^\\s*(active|archived)\\s*(,\\s*(active|archived)\\s*)*$" } })

export const WorkflowListQuery = querySchema("WorkflowList", {
  status: Schema.optionalWith(WorkflowStatusList, { default: () => [] }).annotations({
    description: "Only workflows with this status: active, archived, or both comma-separated (active,archived)"
  })
})

export const WorkflowPath = pathSchema("Workflow", { workflow_id: IdFromPath.pipe(Schema.brand("WorkflowId")) })
