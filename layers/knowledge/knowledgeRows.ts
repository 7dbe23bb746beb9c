import type { KnowledgeDocument, ProcessingStatus, RetrievalMode } from "../../src/knowledge/knowledgeDocument.ts"

export interface DocumentRow {
  readonly id: string | number
  readonly organization_id: string | number
  readonly document_uuid: string
  readonly created_by: string | number | null
  readonly filename: string
  readonly mime_type: string
  readonly file_size_bytes: string | number
  readonly file_hash: string | null
  readonly s3_key: string
  readonly retrieval_mode: RetrievalMode
  readonly language: string
  readonly processing_status: ProcessingStatus
  readonly processing_error: string | null
  readonly total_chunks: number
  readonly total_pages: number | null
  readonly pages_done: number
  readonly embedding_model: string | null
  readonly custom_metadata: Record<string, unknown> | null
  readonly created_at: Date
  readonly updated_at: Date
}

export const DOCUMENT_COLUMNS =
  `id, organization_id, document_uuid::text AS document_uuid, created_by, filename, mime_type,
  file_size_bytes, file_hash, s3_key, retrieval_mode, language, processing_status, processing_error, total_chunks,
  total_pages, pages_done, embedding_model, custom_metadata, created_at, updated_at`

export const documentOf = (row: DocumentRow): KnowledgeDocument => ({
  id: Number(row.id),
  document_uuid: row.document_uuid,
  filename: row.filename,
  file_size_bytes: Number(row.file_size_bytes),
  file_hash: row.file_hash,
  mime_type: row.mime_type,
  processing_status: row.processing_status,
  processing_error: row.processing_error,
  total_chunks: row.total_chunks,
  total_pages: row.total_pages,
  pages_processed: row.pages_done,
  retrieval_mode: row.retrieval_mode,
  language: row.language,
  embedding_model: row.embedding_model,
  custom_metadata: row.custom_metadata ?? {},
  source_url: null,
  created_at: row.created_at,
  updated_at: row.updated_at,
  organization_id: Number(row.organization_id),
  created_by: row.created_by === null ? null : Number(row.created_by),
  is_active: true
})
