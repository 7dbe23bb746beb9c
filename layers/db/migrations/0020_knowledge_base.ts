import { SqlClient } from "@effect/sql"
import { Effect } from "effect"

/**
 * Knowledge bases: an organization's documents (`knowledge_documents`, one row per uploaded file,
 * claimed by the indexer with `FOR UPDATE SKIP LOCKED` while pending) and their chunks
 * (`knowledge_chunks`), each with a `tsvector` in its document's text-search configuration (GIN
 * indexed) and, when the organization has an embeddings endpoint, its embedding.
 *
 * Embeddings are kept as `real[]` and ranked in the application, unless the database has pgvector
 * (PGlite loads it; a PostgreSQL server needs the package installed before this migration runs):
 * then they go in a `vector` column ranked by the database. A server that gets pgvector later
 * keeps ranking in the application.
 *
 * The organization's embeddings endpoint is a section of its model settings, beside llm/stt/tts.
 */
export const knowledgeBase = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE organization_model_settings ADD COLUMN embeddings jsonb`
  yield* sql`
    CREATE TABLE knowledge_documents (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      organization_id bigint NOT NULL REFERENCES organizations (id) ON DELETE CASCADE,
      document_uuid uuid NOT NULL UNIQUE,
      created_by bigint REFERENCES users (id) ON DELETE SET NULL,
      filename text NOT NULL,
      mime_type text NOT NULL,
      file_size_bytes bigint NOT NULL,
      file_hash text,
      s3_key text NOT NULL,
      retrieval_mode text NOT NULL CHECK (retrieval_mode IN ('chunked', 'full_document')),
      language text NOT NULL,
      processing_status text NOT NULL CHECK (processing_status IN ('pending', 'processing', 'completed', 'failed')),
      processing_error text,
      total_chunks integer NOT NULL DEFAULT 0,
      total_pages integer,
      pages_done integer NOT NULL DEFAULT 0,
      embedding_model text,
      custom_metadata jsonb NOT NULL DEFAULT '{}',
      indexer text,
      heartbeat_at timestamptz,
      created_at timestamptz NOT NULL,
      updated_at timestamptz NOT NULL
    )`
  yield* sql`CREATE INDEX knowledge_documents_organization ON knowledge_documents (organization_id, created_at DESC, id DESC)`
  yield* sql`CREATE INDEX knowledge_documents_pending ON knowledge_documents (id) WHERE processing_status IN ('pending', 'processing')`
  yield* sql`
    CREATE TABLE knowledge_chunks (
      id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      document_id bigint NOT NULL REFERENCES knowledge_documents (id) ON DELETE CASCADE,
      organization_id bigint NOT NULL,
      chunk_index integer NOT NULL,
      chunk_text text NOT NULL,
      chunk_metadata jsonb NOT NULL,
      search_vector tsvector NOT NULL,
      embedding real[],
      UNIQUE (document_id, chunk_index)
    )`
  yield* sql`CREATE INDEX knowledge_chunks_search ON knowledge_chunks USING gin (search_vector)`
  yield* sql`CREATE INDEX knowledge_chunks_organization ON knowledge_chunks (organization_id, document_id)`
  const [pgvector] = yield* sql<{ available: boolean }>`
    SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')
      OR (EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'vector')
          AND has_database_privilege(current_database(), 'CREATE')) AS available`
  if (pgvector?.available) {
    yield* sql`CREATE EXTENSION IF NOT EXISTS vector`
    yield* sql`ALTER TABLE knowledge_chunks ADD COLUMN embedding_vector vector`
  }
})
