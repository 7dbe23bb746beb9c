import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import { JsonObject } from "../../../src/domain/wireTypes.ts"
import {
  ChunkSearchResult,
  KnowledgeDocument,
  ProcessingStatus,
  RetrievalMode
} from "../../../src/knowledge/knowledgeDocument.ts"
import { HttpConflict, HttpForbidden, HttpNotFound, HttpPayloadTooLarge, HttpValidationFailed } from "../../errors.ts"
import { bodySchema, IntFromString, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V1Auth } from "../../security.ts"

const Uuid = Schema.String.pipe(
  Schema.pattern(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i, { message: () => "must be a UUID" })
)

export const DocumentUploadRequest = bodySchema("DocumentUpload", {
  filename: Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(255)),
  mime_type: Schema.String.pipe(Schema.maxLength(200)),
  file_size: Schema.optional(Schema.Int.pipe(Schema.positive())).annotations({
    description: "The file's size in bytes: the upload URL then takes exactly that many"
  }),
  document_uuid: Schema.optional(Uuid).annotations({
    description:
      "Keeps a document's id when it moves from another installation (Dograh), so imported agents' document_uuids still name it; a new one when absent"
  }),
  custom_metadata: Schema.optional(JsonObject)
})

export const DocumentUploadResponse = Schema.Struct({
  upload_url: Schema.String,
  document_uuid: Schema.String,
  s3_key: Schema.String,
  expires_in: Schema.Int,
  max_size_bytes: Schema.Int
}).annotations({ identifier: "DocumentUploadResponse" })

export const ProcessDocumentRequest = bodySchema("ProcessDocument", {
  document_uuid: Uuid,
  s3_key: Schema.String.pipe(Schema.maxLength(500)),
  retrieval_mode: Schema.optional(RetrievalMode),
  language: Schema.optional(Schema.String.pipe(Schema.pattern(/^[a-z_]{1,63}$/))).annotations({
    description: "PostgreSQL text-search configuration for the document's full-text index (default english)"
  }),
  custom_metadata: Schema.optional(JsonObject)
})

export const DocumentListQuery = querySchema("DocumentList", {
  status: Schema.optional(ProcessingStatus),
  limit: Schema.optionalWith(IntFromString({ minimum: 1, maximum: 100 }), { default: () => 100 }),
  offset: Schema.optionalWith(IntFromString({ minimum: 0 }), { default: () => 0 })
})

export const DocumentList = Schema.Struct({
  documents: Schema.Array(KnowledgeDocument),
  total: Schema.Int,
  limit: Schema.Int,
  offset: Schema.Int
}).annotations({ identifier: "DocumentListResponse" })

export const ChunkSearchRequest = bodySchema("ChunkSearch", {
  query: Schema.String.pipe(Schema.trimmed(), Schema.minLength(1), Schema.maxLength(2000)),
  limit: Schema.optional(Schema.Int.pipe(Schema.between(1, 50))),
  document_uuids: Schema.optional(Schema.Array(Uuid).pipe(Schema.maxItems(100)))
})

export const DocumentDeleted = Schema.Struct({ success: Schema.Literal(true), message: Schema.String }).annotations({
  identifier: "DocumentDeletedResponse"
})

const DocumentPath = pathSchema("Document", { document_uuid: Schema.String })

export const KnowledgeBaseApi = HttpApiGroup.make("knowledgeBase")
  .annotate(
    OpenApi.Description,
    "The organization's knowledge base (Dograh's shape): documents (PDF, DOCX, HTML, Markdown, plain text) uploaded through a signed URL, indexed in the background, searched by full text fused with embeddings. Reading and searching need `knowledge:read`, changing `knowledge:write`."
  )
  .add(
    HttpApiEndpoint.post("uploadUrl", "/upload-url")
      .annotate(OpenApi.Summary, "Get a document upload URL")
      .annotate(
        OpenApi.Description,
        "A signed URL to `PUT` the document to, bound to its media type and the upload size cap, and the document's uuid and key. Then call /process-document."
      )
      .setPayload(DocumentUploadRequest)
      .addSuccess(DocumentUploadResponse)
      .addError(HttpValidationFailed)
      .addError(HttpPayloadTooLarge)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.post("process", "/process-document")
      .annotate(OpenApi.Summary, "Index an uploaded document")
      .annotate(
        OpenApi.Description,
        "Records the uploaded file as a document in `pending` state and answers at once; it is indexed in the background (`processing`, then `completed` or `failed` with `processing_error`)."
      )
      .setPayload(ProcessDocumentRequest)
      .addSuccess(KnowledgeDocument)
      .addError(HttpValidationFailed)
      .addError(HttpConflict)
  )
  .add(
    HttpApiEndpoint.get("list", "/documents")
      .annotate(OpenApi.Summary, "List documents")
      .annotate(
        OpenApi.Description,
        "The organization's documents, newest first, with their indexing status; `?status=` filters."
      )
      .setUrlParams(DocumentListQuery)
      .addSuccess(DocumentList)
  )
  .add(
    HttpApiEndpoint.get("get", "/documents/:document_uuid")
      .annotate(OpenApi.Summary, "Get a document")
      .annotate(OpenApi.Description, "One document with its indexing status, progress and, when it failed, why.")
      .setPath(DocumentPath)
      .addSuccess(KnowledgeDocument)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.del("remove", "/documents/:document_uuid")
      .annotate(OpenApi.Summary, "Delete a document")
      .annotate(OpenApi.Description, "Deletes the document, its chunks (no longer retrieved) and its file.")
      .setPath(DocumentPath)
      .addSuccess(DocumentDeleted)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("reindex", "/documents/:document_uuid/reindex")
      .annotate(OpenApi.Summary, "Index a document again")
      .annotate(
        OpenApi.Description,
        "Puts the document back to `pending`: it is extracted, chunked and embedded again (after a failure, or with new embeddings settings). Its current chunks answer searches until the new ones replace them."
      )
      .setPath(DocumentPath)
      .addSuccess(KnowledgeDocument)
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("search", "/search")
      .annotate(OpenApi.Summary, "Search the knowledge base")
      .annotate(
        OpenApi.Description,
        "The passages closest to the query: full-text search (the documents' text-search configuration) fused by reciprocal rank with embedding similarity when the organization has an embeddings endpoint."
      )
      .setPayload(ChunkSearchRequest)
      .addSuccess(ChunkSearchResult)
      .addError(HttpValidationFailed)
  )
  .addError(HttpForbidden)
  .middleware(V1Auth)
  .prefix("/api/v1/knowledge-base")
