import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import type { SearchRequest } from "./searchRequest.ts"

/**
 * Application-side vector ranking (a PostgreSQL without pgvector): reading and parsing an
 * organization's `real[]` embeddings on every search took seconds at 10,000 chunks, so each
 * organization's vectors of one model are kept here as one Float32Array, unit-normalized (cosine
 * similarity is then a dot product). A matrix is reused while its documents are unchanged: every
 * change to a document's chunks (indexing, re-indexing, deletion) changes the documents' count,
 * ids or latest `updated_at`, which are read before each search. Matrices beyond the memory budget
 * are evicted oldest-used first; an organization larger than the budget is ranked without caching.
 */
const BUDGET_FLOATS = 256 * 1024 * 1024 / 4

interface Matrix {
  readonly fingerprint: string
  readonly ids: ReadonlyArray<string>
  readonly documentIds: Float64Array
  readonly dimensions: number
  readonly vectors: Float32Array
}

const unit = (vector: ReadonlyArray<number>) => {
  let norm = 0
  for (const x of vector) norm += x * x
  norm = Math.sqrt(norm)
  return Float32Array.from(vector, (x) => (norm === 0 ? 0 : x / norm))
}

export const makeEmbeddingMatrices = (sql: SqlClient.SqlClient) => {
  const matrices = new Map<string, Matrix>()

  const fingerprintOf = (organizationId: number, model: string) =>
    Effect.map(
      sql<{ fingerprint: string }>`
        SELECT count(*) || ':' || coalesce(sum(id), 0) || ':' || coalesce(max(updated_at)::text, '') AS fingerprint
        FROM knowledge_documents WHERE organization_id = ${organizationId} AND embedding_model = ${model}`,
      (rows) => rows[0]!.fingerprint
    )

  const load = (organizationId: number, model: string, dimensions: number, fingerprint: string) =>
    Effect.map(
      sql<{ id: string; document_id: string; embedding: ReadonlyArray<number> }>`
        SELECT c.id, c.document_id, c.embedding
        FROM knowledge_chunks c
        WHERE c.organization_id = ${organizationId} AND c.embedding IS NOT NULL
          AND array_length(c.embedding, 1) = ${dimensions}
          AND c.document_id IN (
            SELECT id FROM knowledge_documents WHERE organization_id = ${organizationId} AND embedding_model = ${model})`,
      (rows): Matrix => {
        const vectors = new Float32Array(rows.length * dimensions)
        rows.forEach((row, i) => vectors.set(unit(row.embedding.map(Number)), i * dimensions))
        return {
          fingerprint,
          ids: rows.map((row) => String(row.id)),
          documentIds: Float64Array.from(rows, (row) => Number(row.document_id)),
          dimensions,
          vectors
        }
      }
    )

  const remember = (key: string, matrix: Matrix) => {
    if (matrix.vectors.length > BUDGET_FLOATS) return
    matrices.delete(key)
    matrices.set(key, matrix)
    let held = 0
    for (const entry of matrices.values()) held += entry.vectors.length
    for (const [oldest, entry] of matrices) {
      if (held <= BUDGET_FLOATS) break
      matrices.delete(oldest)
      held -= entry.vectors.length
    }
  }

  const matrixFor = (organizationId: number, model: string, dimensions: number) =>
    Effect.gen(function*() {
      const key = `${organizationId}\u0000${model}\u0000${dimensions}`
      const fingerprint = yield* fingerprintOf(organizationId, model)
      const cached = matrices.get(key)
      if (cached?.fingerprint === fingerprint) {
        remember(key, cached)
        return cached
      }
      const matrix = yield* load(organizationId, model, dimensions, fingerprint)
      remember(key, matrix)
      return matrix
    })

  /** The request's document ids, when it names documents. */
  const allowedDocuments = (request: SearchRequest) =>
    request.documentUuids === undefined
      ? Effect.succeed(undefined)
      : request.documentUuids.length === 0
      ? Effect.succeed(new Set<number>())
      : Effect.map(
        sql<{ id: string }>`
          SELECT id FROM knowledge_documents
          WHERE organization_id = ${request.organizationId} AND document_uuid::text IN ${
          sql.in(request.documentUuids)
        }`,
        (rows) => new Set(rows.map((row) => Number(row.id)))
      )

  /** The `candidates` chunks nearest `vector` by cosine similarity, among the organization's of `model`. */
  return (request: SearchRequest, model: string, vector: ReadonlyArray<number>, candidates: number) =>
    Effect.gen(function*() {
      const matrix = yield* matrixFor(request.organizationId, model, vector.length)
      const allowed = yield* allowedDocuments(request)
      const query = unit(vector)
      const { dimensions, vectors } = matrix
      // A bounded selection: the best `candidates` so far, sorted; most rows fail the first comparison.
      const best: Array<{ index: number; similarity: number }> = []
      for (let row = 0; row < matrix.ids.length; row++) {
        if (allowed && !allowed.has(matrix.documentIds[row]!)) continue
        let dot = 0
        const offset = row * dimensions
        for (let i = 0; i < dimensions; i++) dot += query[i]! * vectors[offset + i]!
        if (best.length === candidates && dot <= best[best.length - 1]!.similarity) continue
        let at = best.length
        while (at > 0 && best[at - 1]!.similarity < dot) at--
        best.splice(at, 0, { index: row, similarity: dot })
        if (best.length > candidates) best.pop()
      }
      return best.map(({ index, similarity }) => ({ id: matrix.ids[index]!, similarity }))
    })
}
