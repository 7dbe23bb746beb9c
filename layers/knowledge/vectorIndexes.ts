import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * pgvector's HNSW index needs vectors of one dimension, while `embedding_vector` holds whatever
 * the organizations' embeddings models return (an organization may change models). So there is one
 * partial expression index per dimension, over the chunks of that dimension, made when a dimension
 * is first stored; a search compares only vectors of its query's dimension (and model) and names
 * the same expression, so the planner can walk that index. `vector` indexes up to 2,000
 * dimensions and `halfvec` up to 4,000; larger vectors are ranked exactly, without an index.
 */
export const MAX_VECTOR_INDEX_DIMENSIONS = 2000
export const MAX_HALFVEC_INDEX_DIMENSIONS = 4000

/** The expression a search orders by for vectors of `dimensions`: the indexed one when there can be an index. */
export const orderingExpression = (dimensions: number) =>
  dimensions <= MAX_VECTOR_INDEX_DIMENSIONS
    ? { column: `c.embedding_vector::vector(${dimensions})`, cast: `::vector(${dimensions})` }
    : dimensions <= MAX_HALFVEC_INDEX_DIMENSIONS
    ? { column: `c.embedding_vector::halfvec(${dimensions})`, cast: `::halfvec(${dimensions})` }
    : { column: `c.embedding_vector`, cast: `::vector` }

/** Makes the HNSW index for vectors of `dimensions` if there is none yet. */
export const ensureVectorIndex = (sql: SqlClient.SqlClient, dimensions: number) => {
  if (!Number.isInteger(dimensions) || dimensions < 1 || dimensions > MAX_HALFVEC_INDEX_DIMENSIONS) return Effect.void
  const [type, ops] = dimensions <= MAX_VECTOR_INDEX_DIMENSIONS
    ? ["vector", "vector_cosine_ops"]
    : ["halfvec", "halfvec_cosine_ops"]
  return sql.unsafe(`
    CREATE INDEX IF NOT EXISTS knowledge_chunks_embedding_${dimensions} ON knowledge_chunks
    USING hnsw ((embedding_vector::${type}(${dimensions})) ${ops})
    WHERE vector_dims(embedding_vector) = ${dimensions}`).pipe(Effect.asVoid)
}
