import { Context, type Effect } from "effect"
import type { Conflict, NotFound, PayloadTooLarge, ValidationFailed } from "../src/domain/errors.ts"
import type { Principal } from "../src/domain/principal.ts"
import type {
  ChunkSearchResult,
  KnowledgeBaseSummary,
  KnowledgeDocument,
  ProcessingStatus,
  RetrievalMode
} from "../src/knowledge/knowledgeDocument.ts"

export interface DocumentUploadInput {
  readonly filename: string
  readonly mime_type: string
  readonly file_size?: number | undefined
  /** The id to keep (a document moved from Dograh); a new one when absent. */
  readonly document_uuid?: string | undefined
}

export interface DocumentUploadGrant {
  readonly upload_url: string
  readonly document_uuid: string
  readonly s3_key: string
  readonly expires_in: number
  readonly max_size_bytes: number
}

export interface ProcessDocumentInput {
  readonly document_uuid: string
  readonly s3_key: string
  readonly retrieval_mode?: RetrievalMode | undefined
  readonly language?: string | undefined
  readonly custom_metadata?: Record<string, unknown> | undefined
}

export interface DocumentListQuery {
  readonly status?: ProcessingStatus | undefined
  readonly limit: number
  readonly offset: number
}

export interface ChunkSearchInput {
  readonly query: string
  readonly limit?: number | undefined
  readonly document_uuids?: ReadonlyArray<string> | undefined
  /** Rank by full text alone, without asking the embeddings endpoint (a turn that cannot wait for it). */
  readonly full_text_only?: boolean | undefined
}

/**
 * An organization's knowledge base (Dograh's `/api/v1/knowledge-base`): documents uploaded through a
 * signed URL, indexed in the background (text extracted, chunked, full-text indexed and embedded
 * when an embeddings endpoint is configured), and searched by full text fused with embeddings.
 */
export interface KnowledgeBaseShape {
  readonly uploadUrl: (
    principal: Principal,
    input: DocumentUploadInput
  ) => Effect.Effect<DocumentUploadGrant, ValidationFailed | PayloadTooLarge | Conflict>
  /** Records an uploaded file as a pending document; the indexer picks it up. */
  readonly process: (
    principal: Principal,
    input: ProcessDocumentInput
  ) => Effect.Effect<KnowledgeDocument, ValidationFailed | Conflict>
  readonly list: (
    principal: Principal,
    query: DocumentListQuery
  ) => Effect.Effect<{ readonly documents: ReadonlyArray<KnowledgeDocument>; readonly total: number }>
  readonly get: (principal: Principal, documentUuid: string) => Effect.Effect<KnowledgeDocument, NotFound>
  /** The organization's knowledge base: its documents counted by status, its chunks and indexing models. */
  readonly summary: (principal: Principal) => Effect.Effect<KnowledgeBaseSummary>
  /** Deletes the document, its chunks and its file. */
  readonly remove: (principal: Principal, documentUuid: string) => Effect.Effect<void, NotFound>
  /** Indexes the document again from its file (after a failure, or to embed it with a new endpoint). */
  readonly reindex: (principal: Principal, documentUuid: string) => Effect.Effect<KnowledgeDocument, NotFound>
  /** The organization's passages closest to the query; used by the API and by conversations. */
  readonly search: (
    organizationId: number,
    input: ChunkSearchInput
  ) => Effect.Effect<ChunkSearchResult, ValidationFailed>
}

export class KnowledgeBase extends Context.Tag("talkgraph/KnowledgeBase")<KnowledgeBase, KnowledgeBaseShape>() {}

/** Read-only lookups graph validation makes against the knowledge base. Needs only the database. */
export interface DocumentCatalogShape {
  /** Which of `documentUuids` (lowercased) are documents of the organization, whatever their processing status. */
  readonly existing: (organizationId: number, documentUuids: Iterable<string>) => Effect.Effect<ReadonlySet<string>>
}

export class DocumentCatalog
  extends Context.Tag("talkgraph/DocumentCatalog")<DocumentCatalog, DocumentCatalogShape>()
{}
