import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { OrganizationId } from "../../src/domain/ids.ts"
import type { ToolDefinition, ToolStatus, ToolType } from "../../src/tools/toolDefinition.ts"
import { functionNameOf, type Tool } from "../../src/tools/toolRecord.ts"

/** A tool as stored; its definition was validated when it was saved. */
export interface ToolRow {
  readonly id: number
  readonly tool_uuid: string
  readonly name: string
  readonly description: string | null
  readonly category: ToolType
  readonly icon: string | null
  readonly icon_color: string | null
  readonly status: ToolStatus
  readonly definition: ToolDefinition
  readonly created_at: Date
  readonly updated_at: Date | null
}

export const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The organization's tools: all, those with the given statuses, or those among `uuids`. */
export const selectTools = (
  sql: SqlClient.SqlClient,
  organizationId: OrganizationId,
  filter: { readonly statuses?: ReadonlyArray<ToolStatus>; readonly uuids?: ReadonlyArray<string> }
) => {
  const uuids = filter.uuids?.filter((uuid) => UUID.test(uuid))
  if (uuids !== undefined && uuids.length === 0) return Effect.succeed([] as ReadonlyArray<ToolRow>)
  return sql<ToolRow>`
    SELECT id, tool_uuid::text AS tool_uuid, name, description, category, icon, icon_color, status, definition,
           created_at, updated_at
    FROM tools
    WHERE organization_id = ${organizationId}
      ${filter.statuses ? sql`AND status IN ${sql.in(filter.statuses)}` : sql``}
      ${uuids ? sql`AND tool_uuid::text IN ${sql.in(uuids.map((uuid) => uuid.toLowerCase()))}` : sql``}
    ORDER BY id`.pipe(Effect.orDie)
}

export const toolView = (row: ToolRow): Tool => ({
  id: row.id,
  tool_uuid: row.tool_uuid,
  name: row.name,
  description: row.description,
  category: row.category,
  icon: row.icon,
  icon_color: row.icon_color,
  status: row.status,
  function_name: functionNameOf(row.name),
  definition: row.definition,
  created_at: row.created_at,
  updated_at: row.updated_at
})
