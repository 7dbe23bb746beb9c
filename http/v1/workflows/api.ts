import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
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
  .annotate(
    OpenApi.Description,
    "Agents as versioned workflows: a graph of nodes and edges, with one published version and at most one draft. Reading needs `agents:read`, every change `agents:write`."
  )
  .add(
    HttpApiEndpoint.post("createFromDefinition", "/create/definition")
      .annotate(OpenApi.Summary, "Create a workflow from a definition")
      .annotate(
        OpenApi.Description,
        "Validates the graph fully and stores it as published version 1. A definition that cannot run answers 422 with one entry per problem, naming the node or edge and field."
      )
      .setPayload(CreateWorkflowRequest)
      .addSuccess(WorkflowResponse)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("createFromTemplate", "/create/template")
      .annotate(OpenApi.Summary, "Create a workflow from a template")
      .annotate(
        OpenApi.Description,
        "The organization's LLM writes the agent for the described use case (greeting, prompts, steps, transitions, extraction variables); the graph is built around it and validated. 422 when no LLM is configured, 502 when the LLM fails."
      )
      .setPayload(CreateWorkflowTemplateRequest)
      .addSuccess(WorkflowResponse)
      .addError(HttpValidationFailed)
      .addError(HttpUpstreamFailed)
  )
  .add(
    HttpApiEndpoint.get("list", "/fetch")
      .annotate(OpenApi.Summary, "List workflows")
      .annotate(
        OpenApi.Description,
        "The organization's workflows, newest first, each with its current version and run count. `status` keeps one status or several, comma-separated (`active,archived`)."
      )
      .setUrlParams(WorkflowListQuery)
      .addSuccess(Schema.Array(WorkflowResponse))
  )
  .add(
    HttpApiEndpoint.get("get", "/fetch/:workflow_id")
      .annotate(OpenApi.Summary, "Get a workflow")
      .annotate(
        OpenApi.Description,
        "One workflow with its current version: the draft when there is one, else the published version."
      )
      .setPath(WorkflowPath)
      .addSuccess(WorkflowResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.put("update", "/:workflow_id")
      .annotate(OpenApi.Summary, "Edit a workflow")
      .annotate(
        OpenApi.Description,
        "Renames the workflow and edits its single draft, created from the published version when there is none. A draft may be unfinished as long as it is a graph."
      )
      .setPath(WorkflowPath)
      .setPayload(UpdateWorkflowRequest)
      .addSuccess(WorkflowResponse)
      .addError(HttpNotFound)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.post("publish", "/:workflow_id/publish")
      .annotate(OpenApi.Summary, "Publish the draft")
      .annotate(
        OpenApi.Description,
        "Validates the draft fully and publishes it; the version published before is archived. 409 without a draft; 422 listing every problem when it cannot run."
      )
      .setPath(WorkflowPath)
      .addSuccess(WorkflowResponse)
      .addError(HttpNotFound)
      .addError(HttpConflict)
      .addError(HttpValidationFailed)
  )
  .add(
    HttpApiEndpoint.get("versions", "/:workflow_id/versions")
      .annotate(OpenApi.Summary, "List versions")
      .annotate(OpenApi.Description, "Every version of the workflow, newest first.")
      .setPath(WorkflowPath)
      .addSuccess(Schema.Array(WorkflowVersionResponse))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("validate", "/:workflow_id/validate")
      .annotate(OpenApi.Summary, "Validate the current version")
      .annotate(
        OpenApi.Description,
        "Checks the current version (the draft, else the published one) and lists every problem with the node or edge and field it concerns."
      )
      .setPath(WorkflowPath)
      .addSuccess(WorkflowValidationResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.put("setStatus", "/:workflow_id/status")
      .annotate(OpenApi.Summary, "Archive or unarchive a workflow")
      .annotate(OpenApi.Description, "Sets the workflow's status to `active` or `archived`.")
      .setPath(WorkflowPath)
      .setPayload(UpdateWorkflowStatusRequest)
      .addSuccess(WorkflowResponse)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("duplicate", "/:workflow_id/duplicate")
      .annotate(OpenApi.Summary, "Duplicate a workflow")
      .annotate(
        OpenApi.Description,
        "Creates a new workflow holding a copy of the published version and of any open draft."
      )
      .setPath(WorkflowPath)
      .addSuccess(WorkflowResponse)
      .addError(HttpNotFound)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/workflow")
