import type { SqlClient } from "@effect/sql"
import { Clock, Effect, Option } from "effect"
import type { EmbeddingsConnection } from "../../services/ModelSettings.ts"
import type { OutboundHttpShape } from "../../services/OutboundHttp.ts"
import type { ChunkSearchResult, RetrievedChunk } from "../../src/knowledge/knowledgeDocument.ts"
import { fuseRankings } from "../../src/knowledge/rankFusion.ts"
import { makeEmbeddingMatrices } from "./embeddingMatrices.ts"
import { embedTexts } from "./embeddingsClient.ts"
import { makeFullTextRanking } from "./fullTextRanking.ts"
import type { SearchRequest } from "./searchRequest.ts"
import { pgvectorRanking } from "./vectorRanking.ts"

/** Each ranking contributes this many candidates (at least) to the fusion. */
const candidatesFor = (limit: number) => Math.max(limit * 4, 20)

export const makeKnowledgeSearch = (
  sql: SqlClient.SqlClient,
  outbound: OutboundHttpShape,
  pgvector: boolean
) => {
  const fullTextRanking = makeFullTextRanking(sql)
  const applicationRanking = makeEmbeddingMatrices(sql)

  /**
   * The chunks nearest the query's embedding, among those embedded with the same model: by pgvector
   * in the database when it has it, else by cosine similarity computed here.
   */
  const vectorRanking = (request: SearchRequest, model: string, vector: ReadonlyArray<number>) =>
    pgvector
      ? pgvectorRanking(sql, request, model, vector, candidatesFor(request.limit))
      : applicationRanking(request, model, vector, candidatesFor(request.limit))

  const chunksOf = (ids: ReadonlyArray<string>) =>
    ids.length === 0 ? Effect.succeed([]) : sql<{
      id: string
      document_id: string
      chunk_text: string
      chunk_index: number
      chunk_metadata: Record<string, unknown>
      filename: string
      document_uuid: string
    }>`
      SELECT c.id, c.document_id, c.chunk_text, c.chunk_index, c.chunk_metadata, d.filename, d.document_uuid::text AS document_uuid
      FROM knowledge_chunks c JOIN knowledge_documents d ON d.id = c.document_id
      WHERE c.id IN ${sql.in(ids)}`

  /** The query's embedding, or none when the endpoint fails: retrieval then falls back to full text. */
  const queryEmbedding = (connection: EmbeddingsConnection, query: string) =>
    Effect.tryPromise(() => embedTexts(outbound, connection, [query])).pipe(
      Effect.map((vectors) => Option.some(vectors[0]!)),
      Effect.catchAll((error) =>
        Effect.logWarning("Knowledge search: the embeddings endpoint failed; answering from full text", error.cause)
          .pipe(Effect.as(Option.none<Array<number>>()))
      )
    )

  return (request: SearchRequest, embeddings: Option.Option<EmbeddingsConnection>) =>
    Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      const [fullText, nearest] = yield* Effect.all([
        fullTextRanking(request, candidatesFor(request.limit)),
        Option.match(embeddings, {
          onNone: () => Effect.succeed(Option.none<ReadonlyArray<{ id: string; similarity: number }>>()),
          onSome: (connection) =>
            Effect.flatMap(queryEmbedding(connection, request.query), (vector) =>
              Option.match(vector, {
                onNone: () => Effect.succeed(Option.none()),
                onSome: (vector) => Effect.map(vectorRanking(request, connection.model, vector), Option.some)
              }))
        })
      ], { concurrency: 2 })
      const fused = fuseRankings([
        fullText.map((row) => String(row.id)),
        ...Option.match(nearest, { onNone: () => [], onSome: (rows) => [rows.map((row) => String(row.id))] })
      ]).slice(0, request.limit)
      const rows = new Map((yield* chunksOf(fused.map((item) => item.id))).map((row) => [String(row.id), row]))
      const similarities = new Map(Option.match(nearest, {
        onNone: () => fullText.map((row) => [String(row.id), Number(row.rank) / (1 + Number(row.rank))] as const),
        onSome: (rows) => rows.map((row) => [String(row.id), Number(row.similarity)] as const)
      }))
      const chunks: Array<RetrievedChunk> = fused.flatMap(({ id, score }) => {
        const row = rows.get(id)
        if (!row) return []
        return [{
          id: Number(row.id),
          document_id: Number(row.document_id),
          chunk_text: row.chunk_text,
          contextualized_text: null,
          chunk_index: row.chunk_index,
          chunk_metadata: { ...row.chunk_metadata, rrf_score: Number(score.toFixed(6)) },
          filename: row.filename,
          document_uuid: row.document_uuid,
          similarity: Number((similarities.get(id) ?? 0).toFixed(6))
        }]
      })
      const result: ChunkSearchResult = {
        chunks,
        query: request.query,
        total_results: chunks.length,
        retrieval: Option.isSome(nearest) ? "hybrid" : "full_text",
        latency_ms: (yield* Clock.currentTimeMillis) - started
      }
      return result
    }).pipe(Effect.withSpan("KnowledgeBase.searchChunks", { attributes: { organizationId: request.organizationId } }))
}
