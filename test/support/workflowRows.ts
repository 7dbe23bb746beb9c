import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import * as crypto from "node:crypto"
import type { RunningServer } from "./server.ts"

/** A minimal workflow graph whose prompts reference the given `{{variables}}`. */
export const definitionUsing = (variables: ReadonlyArray<string> = []) => ({
  nodes: [
    {
      id: "start",
      type: "startCall",
      position: { x: 0, y: 0 },
      data: { greeting: "Hello!", prompt: `Talk to the caller. ${variables.map((name) => `{{${name}}}`).join(" ")}` }
    },
    { id: "end", type: "endCall", position: { x: 0, y: 100 }, data: { prompt: "Say goodbye." } }
  ],
  edges: [{ id: "e1", source: "start", target: "end", data: { label: "done", condition: "The caller is done" } }]
})

/**
 * Inserts a workflow with a published definition straight into the database, so campaign tests
 * do not depend on the workflow endpoints.
 */
export const insertWorkflow = (
  server: RunningServer,
  organizationId: number,
  options: {
    readonly name?: string
    readonly variables?: ReadonlyArray<string>
    readonly status?: "active" | "archived"
  } = {}
): Promise<number> =>
  server.run(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const [workflow] = yield* sql<{ id: number }>`
        INSERT INTO workflows (organization_id, workflow_uuid, name, status)
        VALUES (${organizationId}, ${crypto.randomUUID()}, ${options.name ?? "Test agent"}, ${
        options.status ?? "active"
      })
        RETURNING id`
      yield* sql`
        INSERT INTO workflow_definitions (workflow_id, version_number, version_status, workflow_definition, published_at)
        VALUES (${workflow!.id}, 1, 'published', ${JSON.stringify(definitionUsing(options.variables))}::jsonb, now())`
      return workflow!.id
    })
  )
