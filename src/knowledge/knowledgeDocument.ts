import { Schema } from "effect"
import { JsonObject, Timestamp } from "../domain/wireTypes.ts"

export const ProcessingStatus = Schema.Literal("pending", "processing", "completed", "failed")
export type ProcessingStatus = typeof ProcessingStatus.Type

export const RetrievalMode = Schema.Literal("chunked", "full_document")
export type RetrievalMode = typeof RetrievalMode.Type

/** A knowledge-base document as Dograh's API shows it, with the indexing progress talkgraph adds. */
export const KnowledgeDocument = Schema.Struct({
  id: Schema.Int,
  document_uuid: Schema.String,
  filename: Schema.String,
  file_size_bytes: Schema.Int,
  file_hash: Schema.NullOr(Schema.String),
  mime_type: Schema.String,
  processing_status: ProcessingStatus,
  processing_error: Schema.NullOr(Schema.String).annotations({
    description: "Why indexing failed, in words a person can act on"
  }),
  total_chunks: Schema.Int,
  total_pages: Schema.NullOr(Schema.Int),
  pages_processed: Schema.Int.annotations({ description: "Progress while processing: pages (or sections) read" }),
  retrieval_mode: RetrievalMode,
  language: Schema.String.annotations({ description: "The PostgreSQL text-search configuration (e.g. english)" }),
  embedding_model: Schema.NullOr(Schema.String),
  custom_metadata: JsonObject,
  source_url: Schema.Null,
  created_at: Timestamp,
  updated_at: Timestamp,
  organization_id: Schema.Int,
  created_by: Schema.NullOr(Schema.Int),
  is_active: Schema.Boolean
}).annotations({ identifier: "KnowledgeDocument" })
export type KnowledgeDocument = typeof KnowledgeDocument.Type

export const ChunkMetadata = JsonObject

/** One retrieved passage, Dograh's `ChunkResponseSchema`. */
export const RetrievedChunk = Schema.Struct({
  id: Schema.Int,
  document_id: Schema.Int,
  chunk_text: Schema.String,
  contextualized_text: Schema.Null,
  chunk_index: Schema.Int,
  chunk_metadata: ChunkMetadata,
  filename: Schema.String,
  document_uuid: Schema.String,
  similarity: Schema.Number.annotations({
    description:
      "Cosine similarity of the embeddings when the organization has an embeddings endpoint, else the full-text rank scaled to 0–1"
  })
}).annotations({ identifier: "KnowledgeChunk" })
export type RetrievedChunk = typeof RetrievedChunk.Type

export const ChunkSearchResult = Schema.Struct({
  chunks: Schema.Array(RetrievedChunk),
  query: Schema.String,
  total_results: Schema.Int,
  retrieval: Schema.Literal("hybrid", "full_text").annotations({
    description:
      "hybrid: full-text and embeddings fused by reciprocal rank; full_text: no embeddings endpoint configured"
  }),
  latency_ms: Schema.Number
}).annotations({ identifier: "KnowledgeSearchResponse" })
export type ChunkSearchResult = typeof ChunkSearchResult.Type

/**
 * An organization's knowledge base (v2 `GET /api/v2/knowledge-bases`): each organization has one,
 * which every agent of it may search; its documents by indexing status, its chunks and what
 * they were indexed with.
 */
export const KnowledgeBaseSummary = Schema.Struct({
  id: Schema.Literal("default"),
  documents: Schema.Struct({
    total: Schema.Int,
    pending: Schema.Int,
    processing: Schema.Int,
    completed: Schema.Int,
    failed: Schema.Int
  }),
  total_chunks: Schema.Int,
  total_bytes: Schema.Int,
  languages: Schema.Array(Schema.String).annotations({ description: "Text-search configurations the documents use" }),
  embedding_models: Schema.Array(Schema.String).annotations({
    description: "Embeddings models the documents were indexed with (none: full-text search only)"
  }),
  updated_at: Schema.NullOr(Timestamp)
}).annotations({ identifier: "KnowledgeBaseSummary" })
export type KnowledgeBaseSummary = typeof KnowledgeBaseSummary.Type
