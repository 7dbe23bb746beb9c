import { HttpApiBuilder } from "@effect/platform"
import { Effect } from "effect"
import { Workflows, type WorkflowView } from "../../../services/Workflows.ts"
import { Api } from "../../api.ts"
import { requireScope } from "../../security.ts"
import { pagination } from "../envelopes.ts"

const summary = (workflow: WorkflowView) => ({
  id: workflow.id,
  uuid: workflow.workflow_uuid,
  name: workflow.name,
  status: workflow.status,
  version_number: workflow.version_number,
  version_status: workflow.version_status,
  created_at: workflow.created_at,
  updated_at: workflow.updated_at
})

export const AgentsHandlers = HttpApiBuilder.group(Api, "agents", (handlers) =>
  Effect.gen(function*() {
    const workflows = yield* Workflows
    const reader = requireScope("agents:read")
    return handlers
      .handle("list", ({ urlParams }) =>
        Effect.flatMap(reader, (principal) =>
          workflows.page(principal, urlParams.page, urlParams.page_size)).pipe(
            Effect.map(({ items, total }) => ({
              data: items.map(summary),
              pagination: pagination(urlParams.page, urlParams.page_size, total)
            }))
          ))
      .handle("get", ({ path }) =>
        Effect.flatMap(reader, (principal) =>
          workflows.get(principal, path.agent_id)).pipe(
            Effect.map((workflow) => ({
              data: {
                ...summary(workflow),
                definition: workflow.workflow_definition,
                configurations: workflow.workflow_configurations ?? {}
              }
            }))
          ))
  }))
