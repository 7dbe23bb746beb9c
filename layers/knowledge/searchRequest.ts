import type { SqlClient } from "@effect/sql"

export interface SearchRequest {
  readonly organizationId: number
  readonly query: string
  readonly limit: number
  readonly documentUuids: ReadonlyArray<string> | undefined
}

/** Restricts chunks `c` to the request's documents when it names some (none when it names an empty list). */
export const documentFilter = (sql: SqlClient.SqlClient, request: SearchRequest) =>
  request.documentUuids === undefined
    ? sql``
    : request.documentUuids.length === 0
    ? sql`AND false`
    : sql`AND c.document_id IN (
        SELECT id FROM knowledge_documents
        WHERE organization_id = ${request.organizationId} AND document_uuid::text IN ${sql.in(request.documentUuids)})`
