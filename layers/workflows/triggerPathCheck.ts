import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ValidationFailed } from "../../src/domain/errors.ts"
import { record } from "../../src/graph/decodeIssues.ts"
import { definitionTriggerPaths } from "../../src/graph/sideNodeRules.ts"

/**
 * A trigger node's path places calls for one agent only: a definition whose trigger paths are
 * held by another agent of the organization (in its draft or published version) is refused (422
 * at each such node's `trigger_path`, `trigger_path_taken`).
 * Paths are looked up within the caller's organization (`POST /api/v1/public/agent/<path>` with
 * its API key), so two organizations may use the same path. Archived agents keep their paths:
 * restoring one must not make two agents answer one path.
 */
export const makeTriggerPathCheck = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return (organizationId: number, workflowId: number | null, definition: unknown) =>
    Effect.gen(function*() {
      const paths = [...definitionTriggerPaths(definition)]
      if (paths.length === 0) return null
      const taken = yield* sql<{ trigger_path: string; workflow_id: number }>`
        SELECT DISTINCT n -> 'data' ->> 'trigger_path' AS trigger_path, w.id AS workflow_id
        FROM workflows w JOIN workflow_definitions d ON d.workflow_id = w.id,
             jsonb_array_elements(d.workflow_definition -> 'nodes') n
        WHERE w.organization_id = ${organizationId} AND w.id <> ${workflowId ?? 0}
          AND d.version_status IN ('draft', 'published')
          AND n ->> 'type' = 'trigger' AND n -> 'data' ->> 'trigger_path' IN ${sql.in(paths)}
        ORDER BY 1`
      if (taken.length === 0) return null
      const holders = new Map(taken.map((row) => [row.trigger_path, Number(row.workflow_id)]))
      const nodes = record(definition)["nodes"] as ReadonlyArray<unknown>
      const problems = nodes.flatMap((node, index) => {
        const path = record(record(node)["data"])["trigger_path"]
        if (record(node)["type"] !== "trigger" || typeof path !== "string" || !holders.has(path)) return []
        return [{
          loc: ["body", "workflow_definition", "nodes", index, "data", "trigger_path"],
          msg: `trigger_path "${path}" is already used by agent ${
            holders.get(path)
          } of this organization; give this trigger node another path`,
          type: "trigger_path_taken"
        }]
      })
      return new ValidationFailed({ message: "A trigger path is already used by another agent", problems })
    }).pipe(Effect.orDie)
})
