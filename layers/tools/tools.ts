import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { Credentials } from "../../services/Credentials.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { ToolRunner } from "../../services/ToolRunner.ts"
import { type ToolInput, type ToolReference, Tools, type ToolTestInput, type ToolUpdate } from "../../services/Tools.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import type { ToolDefinition, ToolStatus } from "../../src/tools/toolDefinition.ts"
import { functionNameOf } from "../../src/tools/toolRecord.ts"
import type { RunnableTool } from "../../src/tools/toolRun.ts"
import { uniqueViolation } from "../telephony/configRows.ts"
import { checkDefinition } from "./toolChecks.ts"
import { selectTools, type ToolRow, toolView, UUID } from "./toolRows.ts"

/** Tools a conversation runs itself; `end_call` is the engine's own, `transfer_call` waits for the calls work. */
const RUNNABLE_TYPES: ReadonlySet<ToolDefinition["type"]> = new Set([
  "http_api",
  "calculator",
  "current_time",
  "end_call",
  "send_dtmf"
])

export const ToolsLive = Layer.effect(
  Tools,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbound = yield* OutboundHttp
    const credentials = yield* Credentials
    const runner = yield* ToolRunner

    const findRow = (organizationId: OrganizationId, uuid: string) =>
      Effect.flatMap(
        UUID.test(uuid) ? selectTools(sql, organizationId, { uuids: [uuid] }) : Effect.succeed([] as Array<ToolRow>),
        (rows) => (rows[0] ? Effect.succeed(rows[0]) : Effect.fail(new NotFound({ resource: "Tool", id: uuid })))
      )

    const list = Effect.fn("Tools.list")(function*(principal: Principal, statuses: ReadonlyArray<ToolStatus>) {
      return (yield* selectTools(sql, principal.organizationId, { statuses })).map(toolView)
    })

    const get = Effect.fn("Tools.get")(function*(principal: Principal, uuid: string) {
      return toolView(yield* findRow(principal.organizationId, uuid))
    })

    const create = Effect.fn("Tools.create")(function*(principal: Principal, input: ToolInput) {
      if (input.category !== undefined && input.category !== input.definition.type) {
        return yield* ValidationFailed.single(
          ["body", "category"],
          `category "${input.category}" must match definition.type "${input.definition.type}"`
        )
      }
      const credentialId = yield* checkDefinition(outbound, credentials, principal.organizationId, input.definition)
      const [row] = yield* sql<{ tool_uuid: string }>`
        INSERT INTO tools (tool_uuid, organization_id, created_by, name, description, category, icon, icon_color,
                           definition, credential_id)
        VALUES (${
        input.tool_uuid?.toLowerCase() ?? crypto.randomUUID()
      }, ${principal.organizationId}, ${principal.userId}, ${input.name},
                ${input.description ?? null}, ${input.definition.type}, ${input.icon ?? null}, ${
        input.icon_color ?? null
      },
                ${JSON.stringify(input.definition)}::jsonb, ${credentialId})
        RETURNING tool_uuid::text AS tool_uuid`.pipe(
        Effect.catchTag("SqlError", (error) =>
          uniqueViolation(error, "tools_tool_uuid_key")
            ? Effect.fail(new Conflict({ message: `A tool with tool_uuid ${input.tool_uuid} already exists` }))
            : Effect.die(error))
      )
      return toolView(yield* findRow(principal.organizationId, row!.tool_uuid).pipe(Effect.orDie))
    })

    const update = Effect.fn("Tools.update")(function*(principal: Principal, uuid: string, input: ToolUpdate) {
      const current = yield* findRow(principal.organizationId, uuid)
      const definition = input.definition ?? current.definition
      if (definition.type !== current.category) {
        return yield* ValidationFailed.single(
          ["body", "definition", "type"],
          `a ${current.category} tool stays one; create a new tool for a ${definition.type}`
        )
      }
      // Checked again even when unchanged: the credential's binding is what it is now.
      const credentialId = yield* checkDefinition(outbound, credentials, principal.organizationId, definition)
      yield* sql`
        UPDATE tools
        SET name = ${input.name ?? current.name},
            description = ${input.description === undefined ? current.description : input.description},
            icon = ${input.icon === undefined ? current.icon : input.icon},
            icon_color = ${input.icon_color === undefined ? current.icon_color : input.icon_color},
            status = ${input.status ?? current.status},
            definition = ${JSON.stringify(definition)}::jsonb, credential_id = ${credentialId}, updated_at = now()
        WHERE id = ${current.id}`.pipe(Effect.orDie)
      return toolView(yield* findRow(principal.organizationId, uuid))
    })

    const setStatus = Effect.fn("Tools.setStatus")(function*(principal: Principal, uuid: string, status: ToolStatus) {
      const current = yield* findRow(principal.organizationId, uuid)
      yield* sql`UPDATE tools SET status = ${status}, updated_at = now() WHERE id = ${current.id}`.pipe(Effect.orDie)
      return toolView(yield* findRow(principal.organizationId, uuid))
    })

    const runnableOf = (row: ToolRow): RunnableTool => ({
      uuid: row.tool_uuid,
      name: functionNameOf(row.name),
      description: row.description?.trim() || row.name,
      definition: row.definition
    })

    const test = Effect.fn("Tools.test")(function*(principal: Principal, uuid: string, input: ToolTestInput) {
      const row = yield* findRow(principal.organizationId, uuid)
      if (
        row.definition.type === "end_call" || row.definition.type === "transfer_call" ||
        row.definition.type === "send_dtmf"
      ) {
        return yield* ValidationFailed.single(
          ["path", "tool_uuid"],
          `${row.definition.type} tools act on a live call and cannot be tested here; HTTP API, calculator and current_time tools can`
        )
      }
      const outcome = yield* runner.run({
        organizationId: principal.organizationId,
        tool: runnableOf(row),
        arguments: JSON.stringify(input.llm_params),
        variables: {},
        presetValues: Object.keys(input.preset_params).length > 0 ? input.preset_params : undefined
      })
      return { ...outcome, tool: toolView(row) }
    })

    const references = Effect.fn("Tools.references")(
      function*(organizationId: OrganizationId, uuids: ReadonlySet<string>) {
        const rows = yield* selectTools(sql, organizationId, { uuids: [...uuids] })
        return new Map(rows.map((row): [string, ToolReference] => [row.tool_uuid, {
          name: functionNameOf(row.name),
          status: row.status
        }]))
      }
    )

    const runnable = Effect.fn("Tools.runnable")(function*(organizationId: OrganizationId, uuids: ReadonlySet<string>) {
      const rows = yield* selectTools(sql, organizationId, { uuids: [...uuids], statuses: ["active"] })
      return new Map(
        rows.filter((row) => RUNNABLE_TYPES.has(row.definition.type)).map((row) => [row.tool_uuid, runnableOf(row)])
      )
    })

    return Tools.of({ list, get, create, update, setStatus, test, references, runnable })
  })
)
