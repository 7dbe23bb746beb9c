import { SqlClient } from "@effect/sql"
import { Clock, Effect, Layer, Option } from "effect"
import * as crypto from "node:crypto"
import { AppConfig } from "../../services/AppConfig.ts"
import {
  type ChunkSearchInput,
  type DocumentListQuery,
  type DocumentUploadInput,
  KnowledgeBase,
  type ProcessDocumentInput
} from "../../services/KnowledgeBase.ts"
import { ModelSettings } from "../../services/ModelSettings.ts"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { Storage } from "../../services/Storage.ts"
import { StoredObjects } from "../../services/StoredObjects.ts"
import { Conflict, NotFound, PayloadTooLarge, ValidationFailed } from "../../src/domain/errors.ts"
import type { Principal } from "../../src/domain/principal.ts"
import {
  documentKey,
  kindOfFileName,
  kindOfMediaType,
  mediaTypeOfKind,
  parseDocumentKey,
  storedFileName,
  SUPPORTED_MEDIA_TYPES
} from "../../src/knowledge/documentKinds.ts"
import { makeKnowledgeIndexer } from "./knowledgeIndexer.ts"
import { DOCUMENT_COLUMNS, documentOf, type DocumentRow } from "./knowledgeRows.ts"
import { makeKnowledgeSearch } from "./knowledgeSearch.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i
const DEFAULT_LANGUAGE = "english"
const DEFAULT_SEARCH_LIMIT = 5

export const KnowledgeBaseLive = Layer.scoped(
  KnowledgeBase,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const storage = yield* Storage
    const storedObjects = yield* StoredObjects
    const modelSettings = yield* ModelSettings
    const outbound = yield* OutboundHttp
    const onPostgres = Option.isSome((yield* AppConfig).databaseUrl)
    const [vectorColumn] = yield* sql<{ present: boolean }>`
      SELECT EXISTS (
        SELECT 1 FROM information_schema.columns
        WHERE table_name = 'knowledge_chunks' AND column_name = 'embedding_vector'
      ) AS present`.pipe(Effect.orDie)
    const pgvector = vectorColumn?.present === true
    const indexer = yield* makeKnowledgeIndexer({ sql, storage, modelSettings, outbound, pgvector, onPostgres })
    const searchChunks = makeKnowledgeSearch(sql, outbound, pgvector)

    const selectDocuments = sql.unsafe(`SELECT ${DOCUMENT_COLUMNS} FROM knowledge_documents`)

    const find = (principal: Principal, documentUuid: string) =>
      Effect.gen(function*() {
        if (!UUID.test(documentUuid)) return yield* new NotFound({ resource: "Document", id: documentUuid })
        const [row] = yield* sql<DocumentRow>`
          ${selectDocuments}
          WHERE organization_id = ${principal.organizationId} AND document_uuid = ${documentUuid.toLowerCase()}::uuid`
        return row ?? (yield* new NotFound({ resource: "Document", id: documentUuid }))
      })

    const uploadUrl = Effect.fn("KnowledgeBase.uploadUrl")(function*(principal: Principal, input: DocumentUploadInput) {
      const kind = kindOfMediaType(input.mime_type) ?? kindOfFileName(input.filename)
      if (!kind) {
        return yield* ValidationFailed.single(
          ["body", "mime_type"],
          `A knowledge base reads PDF, DOCX, HTML, Markdown and plain text: mime_type must be one of ${
            SUPPORTED_MEDIA_TYPES.join(", ")
          }`
        )
      }
      if (input.file_size !== undefined && input.file_size > storage.limits.maxBytes) {
        return yield* new PayloadTooLarge({
          message: `The file is larger than the ${storage.limits.maxBytes}-byte upload limit`
        })
      }
      yield* storedObjects.ensureRoom(principal.organizationId, input.file_size ?? 0)
      const documentUuid = input.document_uuid?.toLowerCase() ?? crypto.randomUUID()
      if (input.document_uuid !== undefined) {
        const [taken] = yield* sql`SELECT 1 FROM knowledge_documents WHERE document_uuid = ${documentUuid}::uuid`
        if (taken) {
          return yield* new Conflict({ message: `A document with document_uuid ${documentUuid} already exists` })
        }
      }
      const key = documentKey(principal.organizationId, documentUuid, storedFileName(input.filename, kind))
      const grant = yield* storage.presignUpload(key, {
        contentType: kindOfMediaType(input.mime_type) === kind
          ? input.mime_type.split(";")[0]!.trim().toLowerCase()
          : mediaTypeOfKind(kind),
        maxBytes: storage.limits.maxBytes,
        expiresInSeconds: storage.limits.urlTtlSeconds,
        exactBytes: input.file_size
      })
      return {
        upload_url: grant.url,
        document_uuid: documentUuid,
        s3_key: key,
        expires_in: grant.expiresInSeconds,
        max_size_bytes: input.file_size ?? storage.limits.maxBytes
      }
    }, Effect.catchTag("SqlError", Effect.die))

    const languageProblem = (language: string) =>
      Effect.map(
        sql<{ cfgname: string }>`SELECT cfgname FROM pg_ts_config WHERE cfgname = ${language}`,
        (rows) =>
          rows.length > 0 ? null : ValidationFailed.single(
            ["body", "language"],
            `${language} is not a text-search configuration of this database (e.g. english, french, german, simple)`
          )
      )

    const process = Effect.fn("KnowledgeBase.process")(function*(principal: Principal, input: ProcessDocumentInput) {
      const key = parseDocumentKey(input.s3_key)
      if (
        !key || key.organizationId !== principal.organizationId ||
        key.documentUuid !== input.document_uuid.toLowerCase()
      ) {
        return yield* ValidationFailed.single(
          ["body", "s3_key"],
          "s3_key must be the key /knowledge-base/upload-url gave for this document_uuid"
        )
      }
      const kind = kindOfFileName(key.fileName)
      if (!kind) {
        return yield* ValidationFailed.single(["body", "s3_key"], "The file's type is not one a knowledge base reads")
      }
      const language = input.language ?? DEFAULT_LANGUAGE
      const problem = yield* languageProblem(language)
      if (problem) return yield* problem
      const size = yield* storage.size(input.s3_key).pipe(
        Effect.catchTag(
          "NotFound",
          () =>
            ValidationFailed.single(
              ["body", "s3_key"],
              "No file was uploaded to this key: PUT the file to upload_url first"
            )
        ),
        Effect.catchTag("UpstreamFailed", Effect.die)
      )
      const now = new Date(yield* Clock.currentTimeMillis)
      const [row] = yield* sql<DocumentRow>`
        INSERT INTO knowledge_documents (organization_id, document_uuid, created_by, filename, mime_type, file_size_bytes,
          s3_key, retrieval_mode, language, processing_status, custom_metadata, created_at, updated_at)
        VALUES (${principal.organizationId}, ${key.documentUuid}::uuid, ${principal.userId}, ${key.fileName},
          ${mediaTypeOfKind(kind)}, ${size}, ${input.s3_key}, ${input.retrieval_mode ?? "chunked"}, ${language},
          'pending', ${JSON.stringify(input.custom_metadata ?? {})}::jsonb, ${now}, ${now})
        ON CONFLICT (document_uuid) DO NOTHING
        RETURNING ${sql.unsafe(DOCUMENT_COLUMNS)}`
      if (!row) {
        return yield* new Conflict({
          message: "This document is already processed; use POST /documents/{document_uuid}/reindex to index it again"
        })
      }
      yield* indexer.wake
      return documentOf(row)
    }, Effect.catchTag("SqlError", Effect.die))

    const list = Effect.fn("KnowledgeBase.list")(function*(principal: Principal, query: DocumentListQuery) {
      const status = query.status === undefined ? sql`` : sql`AND processing_status = ${query.status}`
      const rows = yield* sql<DocumentRow>`
        ${selectDocuments} WHERE organization_id = ${principal.organizationId} ${status}
        ORDER BY created_at DESC, id DESC LIMIT ${query.limit} OFFSET ${query.offset}`
      const [count] = yield* sql<{ total: string | number }>`
        SELECT count(*) AS total FROM knowledge_documents WHERE organization_id = ${principal.organizationId} ${status}`
      return { documents: rows.map(documentOf), total: Number(count?.total ?? 0) }
    }, Effect.orDie)

    const summary = Effect.fn("KnowledgeBase.summary")(function*(principal: Principal) {
      const [row] = yield* sql<{
        total: number
        pending: number
        processing: number
        completed: number
        failed: number
        total_chunks: number
        total_bytes: number
        languages: ReadonlyArray<string> | null
        embedding_models: ReadonlyArray<string> | null
        updated_at: Date | null
      }>`
        SELECT count(*)::int AS total,
               count(*) FILTER (WHERE processing_status = 'pending')::int AS pending,
               count(*) FILTER (WHERE processing_status = 'processing')::int AS processing,
               count(*) FILTER (WHERE processing_status = 'completed')::int AS completed,
               count(*) FILTER (WHERE processing_status = 'failed')::int AS failed,
               COALESCE(sum(total_chunks), 0)::int AS total_chunks,
               COALESCE(sum(file_size_bytes), 0)::bigint::float8 AS total_bytes,
               array_agg(DISTINCT language ORDER BY language) AS languages,
               array_agg(DISTINCT embedding_model ORDER BY embedding_model)
                 FILTER (WHERE embedding_model IS NOT NULL) AS embedding_models,
               max(updated_at) AS updated_at
        FROM knowledge_documents WHERE organization_id = ${principal.organizationId}`
      return {
        id: "default" as const,
        documents: {
          total: row?.total ?? 0,
          pending: row?.pending ?? 0,
          processing: row?.processing ?? 0,
          completed: row?.completed ?? 0,
          failed: row?.failed ?? 0
        },
        total_chunks: row?.total_chunks ?? 0,
        total_bytes: Number(row?.total_bytes ?? 0),
        languages: (row?.languages ?? []).filter((language) => language !== null),
        embedding_models: row?.embedding_models ?? [],
        updated_at: row?.updated_at ?? null
      }
    }, Effect.orDie)

    const get = Effect.fn("KnowledgeBase.get")(function*(principal: Principal, documentUuid: string) {
      return documentOf(yield* find(principal, documentUuid))
    }, Effect.catchTag("SqlError", Effect.die))

    const remove = Effect.fn("KnowledgeBase.remove")(function*(principal: Principal, documentUuid: string) {
      const row = yield* find(principal, documentUuid)
      yield* sql`DELETE FROM knowledge_documents WHERE id = ${row.id}`
      yield* storage.remove(row.s3_key).pipe(
        Effect.catchAll((error) =>
          Effect.logWarning("Knowledge base: a deleted document's file stays in storage", error)
        )
      )
    }, Effect.catchTag("SqlError", Effect.die))

    const reindex = Effect.fn("KnowledgeBase.reindex")(function*(principal: Principal, documentUuid: string) {
      const row = yield* find(principal, documentUuid)
      const [updated] = yield* sql<DocumentRow>`
        UPDATE knowledge_documents
        SET processing_status = 'pending', processing_error = NULL, pages_done = 0, indexer = NULL, heartbeat_at = NULL,
            updated_at = now()
        WHERE id = ${row.id}
        RETURNING ${sql.unsafe(DOCUMENT_COLUMNS)}`
      yield* indexer.wake
      return documentOf(updated ?? row)
    }, Effect.catchTag("SqlError", Effect.die))

    const search = Effect.fn("KnowledgeBase.search")(function*(organizationId: number, input: ChunkSearchInput) {
      const badUuid = input.document_uuids?.findIndex((uuid) => !UUID.test(uuid)) ?? -1
      if (badUuid >= 0) return yield* ValidationFailed.single(["body", "document_uuids", badUuid], "must be a UUID")
      return yield* searchChunks(
        {
          organizationId,
          query: input.query,
          limit: input.limit ?? DEFAULT_SEARCH_LIMIT,
          documentUuids: input.document_uuids?.map((uuid) => uuid.toLowerCase())
        },
        input.full_text_only === true ? Option.none() : yield* modelSettings.embeddingsFor(organizationId)
      )
    }, Effect.catchTag("SqlError", Effect.die))

    return KnowledgeBase.of({ uploadUrl, process, list, get, summary, remove, reindex, search })
  })
)
