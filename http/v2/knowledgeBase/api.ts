import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "@effect/platform"
import { Schema } from "effect"
import {
  ChunkSearchResult,
  KnowledgeBaseSummary,
  KnowledgeDocument,
  ProcessingStatus
} from "../../../src/knowledge/knowledgeDocument.ts"
import { HttpForbidden, HttpNotFound, HttpValidationFailed } from "../../errors.ts"
import { IntFromString, pathSchema, querySchema } from "../../requestSchemas.ts"
import { V2Auth } from "../../security.ts"
import { ChunkSearchRequest } from "../../v1/knowledgeBase/api.ts"
import { Collection, Resource } from "../envelopes.ts"

export const V2DocumentListQuery = querySchema("V2DocumentList", {
  status: Schema.optional(ProcessingStatus),
  page: Schema.optionalWith(IntFromString({ minimum: 1, description: "Page number (default 1)" }), {
    default: () => 1
  }),
  page_size: Schema.optionalWith(
    IntFromString({ minimum: 1, maximum: 100, description: "Items per page (default 20)" }),
    { default: () => 20 }
  )
})

const DocumentPath = pathSchema("V2Document", { document_uuid: Schema.String })

export const V2KnowledgeBaseApi = HttpApiGroup.make("v2knowledgeBase")
  .annotate(
    OpenApi.Description,
    "The organization's knowledge base for v2 clients: its documents and search, in v2 envelopes. Needs an API key with `knowledge:read`. Uploading stays on /api/v1/knowledge-base (signed upload URLs)."
  )
  .add(
    HttpApiEndpoint.get("knowledgeBases", "/api/v2/knowledge-bases")
      .annotate(OpenApi.Summary, "List knowledge bases")
      .annotate(
        OpenApi.Description,
        "The organization's knowledge base (one per organization, searched by any of its agents): documents by indexing status, chunks, languages and embeddings models."
      )
      .addSuccess(Collection(KnowledgeBaseSummary))
  )
  .add(
    HttpApiEndpoint.get("list", "/api/v2/knowledge-base/documents")
      .annotate(OpenApi.Summary, "List knowledge-base documents")
      .annotate(OpenApi.Description, "Newest first, with their indexing status, paginated with `page` and `page_size`.")
      .setUrlParams(V2DocumentListQuery)
      .addSuccess(Collection(KnowledgeDocument))
  )
  .add(
    HttpApiEndpoint.get("get", "/api/v2/knowledge-base/documents/:document_uuid")
      .annotate(OpenApi.Summary, "Get a knowledge-base document")
      .annotate(OpenApi.Description, "One document with its indexing status, progress and, when it failed, why.")
      .setPath(DocumentPath)
      .addSuccess(Resource(KnowledgeDocument))
      .addError(HttpNotFound)
  )
  .add(
    HttpApiEndpoint.post("search", "/api/v2/knowledge-base/search")
      .annotate(OpenApi.Summary, "Search the knowledge base")
      .annotate(
        OpenApi.Description,
        "The passages closest to the query, as POST /api/v1/knowledge-base/search answers them, in `data`."
      )
      .setPayload(ChunkSearchRequest)
      .addSuccess(Resource(ChunkSearchResult))
      .addError(HttpValidationFailed)
  )
  .addError(HttpForbidden)
  .middleware(V2Auth)
