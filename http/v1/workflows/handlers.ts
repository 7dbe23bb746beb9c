import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Workflows } from "../../../services/Workflows.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"

const reader = requireScope("agents:read")
const writer = requireScope("agents:write")

export const WorkflowsHandlers = HttpApiBuilder.group(Api, "workflows", (handlers) =>
  Effect.gen(function*() {
    const workflows = yield* Workflows
    return handlers
      .handle("createFromDefinition", ({ payload }) =>
        Effect.flatMap(writer, (principal) => workflows.createFromDefinition(principal, payload)))
      .handle("createFromTemplate", ({ payload }) =>
        Effect.flatMap(writer, (principal) =>
          workflows.createFromTemplate(principal, payload)))
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(reader, (principal) =>
          workflows.list(principal, urlParams.status)))
      .handle("get", ({ path }) =>
        Effect.flatMap(reader, (principal) =>
          workflows.get(principal, path.workflow_id)))
      .handle("update", ({ path, payload }) =>
        Effect.flatMap(writer, (principal) =>
          workflows.update(principal, path.workflow_id, payload)))
      .handle("publish", ({ path }) =>
        Effect.flatMap(writer, (principal) =>
          workflows.publish(principal, path.workflow_id)))
      .handle("versions", ({ path }) =>
        Effect.flatMap(reader, (principal) =>
          workflows.versions(principal, path.workflow_id)))
      .handle("validate", ({ path }) =>
        Effect.flatMap(reader, (principal) =>
          workflows.validate(principal, path.workflow_id)))
      .handle("setStatus", ({ path, payload }) =>
        Effect.flatMap(writer, (principal) =>
          workflows.setStatus(principal, path.workflow_id, payload.status)))
      .handle("duplicate", ({ path }) =>
        Effect.flatMap(writer, (principal) =>
          workflows.duplicate(principal, path.workflow_id)))
  }))
