import { ParseResult, Schema } from "effect"
import { JsonObject, Timestamp } from "../../../src/domain/wireTypes.ts"
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

export const WorkflowStatus = Schema.Literal("active", "archived")

export const CallDispositionCodes = Schema.Struct({
  disposition_codes: Schema.Array(Schema.String)
}).annotations({ identifier: "CallDispositionCodes" })

/** The spec's WorkflowResponse, field for field. */
export const WorkflowResponse = Schema.Struct({
  id: Schema.Int,
  name: Schema.String,
  status: Schema.String,
  created_at: Timestamp,
  workflow_definition: JsonObject,
  current_definition_id: Schema.NullOr(Schema.Int),
  template_context_variables: Schema.optional(Schema.NullOr(JsonObject)),
  call_disposition_codes: Schema.optional(Schema.NullOr(CallDispositionCodes)),
  total_runs: Schema.optional(Schema.NullOr(Schema.Int)),
  workflow_configurations: Schema.optional(Schema.NullOr(JsonObject)),
  version_number: Schema.optional(Schema.NullOr(Schema.Int)),
  version_status: Schema.optional(Schema.NullOr(Schema.String)),
  workflow_uuid: Schema.optional(Schema.NullOr(Schema.String))
}).annotations({ identifier: "WorkflowResponse" })

export const WorkflowVersionResponse = Schema.Struct({
  id: Schema.Int,
  version_number: Schema.Int,
  version_status: Schema.Literal("draft", "published", "archived"),
  workflow_definition: JsonObject,
  template_context_variables: JsonObject,
  workflow_configurations: JsonObject,
  created_at: Timestamp,
  published_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "WorkflowVersionResponse" })

export const WorkflowValidationResponse = Schema.Struct({
  is_valid: Schema.Boolean,
  version_number: Schema.Int,
  version_status: Schema.String,
  errors: Schema.Array(Schema.Struct({
    kind: Schema.Literal("workflow", "node", "edge"),
    id: Schema.NullOr(Schema.String),
    field: Schema.NullOr(Schema.String),
    rule: Schema.String,
    message: Schema.String
  }))
}).annotations({ identifier: "WorkflowValidationResponse" })

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

export const WorkflowPath = pathSchema("Workflow", { workflow_id: IdFromPath })
