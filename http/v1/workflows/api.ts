import { HttpApiEndpoint, HttpApiGroup } from "@effect/platform"
import { Schema } from "effect"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpUpstreamFailed, HttpValidationFailed } from "../../errors.ts"
import { V1Auth } from "../../security.ts"
import {
  CreateWorkflowRequest,
  CreateWorkflowTemplateRequest,
  UpdateWorkflowRequest,
  UpdateWorkflowStatusRequest,
  WorkflowListQuery,
  WorkflowPath,
  WorkflowResponse,
  WorkflowValidationResponse,
  WorkflowVersionResponse
} from "./schemas.ts"

/** Agents as versioned workflows, on the paths of the established open-source platform. */
export const WorkflowsApi = HttpApiGroup.make("workflows")
  .add(
    HttpApiEndpoint.post("createFromDefinition", "/create/definition")
      .setPayload(CreateWorkflowRequest)
      .addSuccess(WorkflowResponse)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("createFromTemplate", "/create/template")
      .setPayload(CreateWorkflowTemplateRequest)
      .addSuccess(WorkflowResponse)
      .addError(HttpValidationFailed)
      .addError(HttpUpstreamFailed)
  )
  .add(HttpApiEndpoint.get("list", "/fetch").setUrlParams(WorkflowListQuery).addSuccess(Schema.Array(WorkflowResponse)))
  .add(HttpApiEndpoint.get("get", "/fetch/:workflow_id").setPath(WorkflowPath).addSuccess(WorkflowResponse).addError(HttpNotFound))
  .add(
    HttpApiEndpoint.put("update", "/:workflow_id")
      .setPath(WorkflowPath)
      .setPayload(UpdateWorkflowRequest)
      .addSuccess(WorkflowResponse)
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("publish", "/:workflow_id/publish")
      .setPath(WorkflowPath)
      .addSuccess(WorkflowResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.get("versions", "/:workflow_id/versions")
      .setPath(WorkflowPath)
      .addSuccess(Schema.Array(WorkflowVersionResponse))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("validate", "/:workflow_id/validate")
      .setPath(WorkflowPath)
      .addSuccess(WorkflowValidationResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.put("setStatus", "/:workflow_id/status")
      .setPath(WorkflowPath)
      .setPayload(UpdateWorkflowStatusRequest)
      .addSuccess(WorkflowResponse)
      .addError(HttpNotFound)
  )
  .add(HttpApiEndpoint.post("duplicate", "/:workflow_id/duplicate").setPath(WorkflowPath).addSuccess(WorkflowResponse).addError(HttpNotFound))
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/workflow")
