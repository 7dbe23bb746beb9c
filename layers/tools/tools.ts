import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer } from "effect"
import { Credentials } from "../../services/Credentials.ts"
import { McpServers } from "../../services/McpServers.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { ToolRunner } from "../../services/ToolRunner.ts"
import {
  type McpRefresh,
  type ToolInput,
  type ToolReference,
  Tools,
  type ToolTestInput,
  type ToolUpdate
} from "../../services/Tools.ts"
import { Conflict, NotFound, ValidationFailed } from "../../src/domain/errors.ts"
import type { OrganizationId } from "../../src/domain/ids.ts"
import type { Principal } from "../../src/domain/principal.ts"
import { expandMcpTool, mcpServerTools } from "../../src/tools/mcpTools.ts"
import type { McpDiscoveredTool, ToolDefinition, ToolStatus } from "../../src/tools/toolDefinition.ts"
import { functionNameOf } from "../../src/tools/toolRecord.ts"
import { failedOutcome, type RunnableTool } from "../../src/tools/toolRun.ts"
import { uniqueViolation } from "../db/sqlDefects.ts"
import { checkDefinition } from "./toolChecks.ts"
import { selectTools, type ToolRow, toolView, UUID } from "./toolRows.ts"

/** Tools a conversation runs itself; `end_call` is the engine's own, `transfer_call` asks the call's carrier. */
const RUNNABLE_TYPES: ReadonlySet<ToolDefinition["type"]> = new Set([
  "http_api",
  "mcp",
  "calculator",
  "current_time",
  "end_call",
  "send_dtmf",
  "transfer_call"
])

/** A changed MCP definition that sends no catalog keeps the one stored, until the server is reached again. */
const keptCatalog = (given: ToolDefinition, current: ToolDefinition): ToolDefinition =>
  given.type === "mcp" && current.type === "mcp" && given.config.discovered_tools === undefined &&
    given.config.url === current.config.url
    ? { ...given, config: { ...given.config, discovered_tools: current.config.discovered_tools ?? [] } }
    : given

export const ToolsLive = Layer.effect(
  Tools,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const outbound = yield* OutboundHttp
    const credentials = yield* Credentials
    const runner = yield* ToolRunner
    const mcp = yield* McpServers

    /**
     * An MCP server's definition with its catalog fetched now; when the server cannot be reached
     * the tool is saved all the same (Dograh's rule), keeping the catalog it had or was given.
     */
    const withCatalog = (organizationId: OrganizationId, definition: ToolDefinition) =>
      definition.type !== "mcp" ? Effect.succeed(definition) : mcp.discover(organizationId, definition.config).pipe(
        Effect.map((tools): ToolDefinition => ({
          ...definition,
          config: { ...definition.config, discovered_tools: tools }
        })),
        Effect.tapError((error) =>
          Effect.logInfo("MCP catalog not fetched").pipe(Effect.annotateLogs({ reason: error.message }))
        ),
        Effect.orElseSucceed(() => definition)
      )

    const storeCatalog = (row: ToolRow, tools: ReadonlyArray<McpDiscoveredTool>) =>
      row.definition.type !== "mcp" ? Effect.void : sql`
        UPDATE tools
        SET definition = ${
        JSON.stringify({ ...row.definition, config: { ...row.definition.config, discovered_tools: tools } })
      }::jsonb,
            updated_at = now()
        WHERE id = ${row.id}`.pipe(Effect.orDie, Effect.asVoid)

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
      const definition = yield* withCatalog(principal.organizationId, input.definition)
      const [row] = yield* sql<{ tool_uuid: string }>`
        INSERT INTO tools (tool_uuid, organization_id, created_by, name, description, category, icon, icon_color,
                           definition, credential_id)
        VALUES (${
        input.tool_uuid?.toLowerCase() ?? crypto.randomUUID()
      }, ${principal.organizationId}, ${principal.userId}, ${input.name},
                ${input.description ?? null}, ${input.definition.type}, ${input.icon ?? null}, ${
        input.icon_color ?? null
      },
                ${JSON.stringify(definition)}::jsonb, ${credentialId})
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
      const given = input.definition ?? current.definition
      if (given.type !== current.category) {
        return yield* ValidationFailed.single(
          ["body", "definition", "type"],
          `a ${current.category} tool stays one; create a new tool for a ${given.type}`
        )
      }
      // Checked again even when unchanged: the credential's binding is what it is now.
      const credentialId = yield* checkDefinition(outbound, credentials, principal.organizationId, given)
      const definition = input.definition === undefined
        ? given
        : yield* withCatalog(principal.organizationId, keptCatalog(given, current.definition))
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
      if (row.definition.type === "mcp") return { ...(yield* testMcp(principal, row, input)), tool: toolView(row) }
      const outcome = yield* runner.run({
        organizationId: principal.organizationId,
        tool: runnableOf(row),
        arguments: JSON.stringify(input.llm_params),
        variables: {},
        presetValues: Object.keys(input.preset_params).length > 0 ? input.preset_params : undefined
      })
      return { ...outcome, tool: toolView(row) }
    })

    /**
     * An MCP tool's test: without `tool_name`, the server's catalog, fetched and kept; with it,
     * one call of that tool of the server with `arguments`, as a conversation would make it.
     */
    const testMcp = (principal: Principal, row: ToolRow, input: ToolTestInput) =>
      Effect.gen(function*() {
        if (row.definition.type !== "mcp") return yield* Effect.dieMessage("not an MCP tool")
        const name = input.llm_params["tool_name"]
        if (name === undefined) {
          const started = yield* Clock.currentTimeMillis
          const listed = yield* mcp.discover(principal.organizationId, row.definition.config).pipe(Effect.either)
          const latency = (yield* Clock.currentTimeMillis) - started
          if (listed._tag === "Left") return failedOutcome(listed.left.message, latency)
          yield* storeCatalog(row, listed.right)
          const offered = expandMcpTool(runnableOf({
            ...row,
            definition: { ...row.definition, config: { ...row.definition.config, discovered_tools: listed.right } }
          }))
          return {
            status: "success" as const,
            result: `The server offers ${offered.length} tool(s) to the model: ${
              offered.map((tool) => tool.name).join(", ")
            }`,
            truncated: false,
            latency_ms: latency,
            status_code: null,
            request: null,
            data: { tools: listed.right }
          }
        }
        if (typeof name !== "string") {
          return yield* ValidationFailed.single(
            ["body", "llm_params", "tool_name"],
            "must be the name of one of the server's tools"
          )
        }
        // A tool the kept catalog does not list yet is still tried: the server is the judge.
        const known = row.definition.config.discovered_tools?.find((tool) => tool.name === name)
        const args = input.llm_params["arguments"] ?? {}
        return yield* runner.run({
          organizationId: principal.organizationId,
          tool: { ...runnableOf(row), mcpTool: known ?? { name } },
          arguments: JSON.stringify(args),
          variables: {}
        })
      })

    const refreshMcp = Effect.fn("Tools.refreshMcp")(function*(principal: Principal, uuid: string) {
      const row = yield* findRow(principal.organizationId, uuid)
      if (row.definition.type !== "mcp") {
        return yield* ValidationFailed.single(
          ["path", "tool_uuid"],
          `a ${row.definition.type} tool has no MCP server to refresh`
        )
      }
      const listed = yield* mcp.discover(principal.organizationId, row.definition.config).pipe(Effect.either)
      if (listed._tag === "Left") {
        return {
          tool_uuid: row.tool_uuid,
          discovered_tools: row.definition.config.discovered_tools ?? [],
          error: `${listed.left.message}; the tools listed before are kept`
        } satisfies McpRefresh
      }
      yield* storeCatalog(row, listed.right)
      return { tool_uuid: row.tool_uuid, discovered_tools: listed.right, error: null } satisfies McpRefresh
    })

    const references = Effect.fn("Tools.references")(
      function*(organizationId: OrganizationId, uuids: ReadonlySet<string>) {
        const rows = yield* selectTools(sql, organizationId, { uuids: [...uuids] })
        return new Map(rows.map((row): [string, ToolReference] => [row.tool_uuid, {
          name: functionNameOf(row.name),
          status: row.status,
          ...(row.definition.type === "mcp"
            ? { serverTools: mcpServerTools(functionNameOf(row.name), row.definition.config) }
            : {})
        }]))
      }
    )

    const runnable = Effect.fn("Tools.runnable")(function*(organizationId: OrganizationId, uuids: ReadonlySet<string>) {
      const rows = yield* selectTools(sql, organizationId, { uuids: [...uuids], statuses: ["active"] })
      return new Map(
        rows.filter((row) => RUNNABLE_TYPES.has(row.definition.type)).map((row) => [row.tool_uuid, runnableOf(row)])
      )
    })

    return Tools.of({ list, get, create, update, setStatus, test, refreshMcp, references, runnable })
  })
)
