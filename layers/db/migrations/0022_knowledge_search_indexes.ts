import { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { ensureVectorIndex } from "../../knowledge/vectorIndexes.ts"

/**
 * Knowledge-base search at scale: an HNSW index per embedding dimension already stored in
 * `embedding_vector` (where the database has pgvector); the indexer makes the index of a dimension
 * it stores for the first time (see `layers/knowledge/vectorIndexes.ts`).
 */
export const knowledgeSearchIndexes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const [vectorColumn] = yield* sql<{ present: boolean }>`
    SELECT EXISTS (SELECT 1 FROM information_schema.columns
                   WHERE table_name = 'knowledge_chunks' AND column_name = 'embedding_vector') AS present`
  if (vectorColumn?.present) {
    const stored = yield* sql<{ dimensions: number }>`
      SELECT DISTINCT vector_dims(embedding_vector) AS dimensions FROM knowledge_chunks WHERE embedding_vector IS NOT NULL`
    for (const { dimensions } of stored) yield* ensureVectorIndex(sql, Number(dimensions))
  }
})
