import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { documentFilter, type SearchRequest } from "./searchRequest.ts"
import { orderingExpression } from "./vectorIndexes.ts"

export interface VectorHit {
  readonly id: string
  readonly similarity: number
}

/** The organization's documents embedded with the query's model: only their vectors are comparable with it. */
const sameModel = (sql: SqlClient.SqlClient, request: SearchRequest, model: string) =>
  sql`c.document_id IN (
    SELECT id FROM knowledge_documents WHERE organization_id = ${request.organizationId} AND embedding_model = ${model})`

/**
 * The chunks nearest the query's embedding by pgvector, through the HNSW index of the query's
 * dimension (`vectorIndexes.ts`). The index is shared by every organization, so its walk is
 * filtered by the organization; `hnsw.iterative_scan` makes it walk on until it has found enough
 * of this organization's chunks instead of stopping after `hnsw.ef_search` nodes of anyone's.
 */
export const pgvectorRanking = (
  sql: SqlClient.SqlClient,
  request: SearchRequest,
  model: string,
  vector: ReadonlyArray<number>,
  candidates: number
) => {
  const ordering = orderingExpression(vector.length)
  const literal = `[${vector.join(",")}]`
  return sql.withTransaction(Effect.gen(function*() {
    yield* sql`SET LOCAL hnsw.iterative_scan = strict_order`
    return yield* sql<VectorHit>`
      SELECT c.id, 1 - (c.embedding_vector <=> ${literal}::vector) AS similarity
      FROM knowledge_chunks c
      WHERE c.organization_id = ${request.organizationId}
        AND vector_dims(c.embedding_vector) = ${sql.literal(String(vector.length))}
        AND ${sameModel(sql, request, model)} ${documentFilter(sql, request)}
      ORDER BY ${sql.literal(ordering.column)} <=> ${literal}${sql.literal(ordering.cast)}
      LIMIT ${candidates}`
  })).pipe(Effect.map((rows) => rows.map((row) => ({ id: String(row.id), similarity: Number(row.similarity) }))))
}
