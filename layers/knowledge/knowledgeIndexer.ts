import type { SqlClient } from "@effect/sql"
import { Cause, Effect, Option, Queue, Runtime, Schedule } from "effect"
import * as crypto from "node:crypto"
import type { ModelSettingsShape } from "../../services/ModelSettings.ts"
import type { OutboundHttpShape } from "../../services/OutboundHttp.ts"
import type { StorageShape } from "../../services/Storage.ts"
import { chunkSections, type TextChunk } from "../../src/knowledge/chunking.ts"
import { kindOfFileName, parseDocumentKey } from "../../src/knowledge/documentKinds.ts"
import { extractDocumentText, ExtractionRefused } from "./documentText.ts"
import { EMBEDDING_BATCH, EmbeddingsFailed, embedTexts } from "./embeddingsClient.ts"
import { ensureVectorIndex } from "./vectorIndexes.ts"

const HEARTBEAT = "10 seconds"
/** A document whose indexer has been silent this long is taken over (its process died). */
const LAPSE_SECONDS = 60
const POLL = "2 seconds"
/** Progress is written every this many pages, not every page: a row update per page would be most of the work. */
const PROGRESS_EVERY_PAGES = 10
const INSERT_BATCH = 200

const serverSideFailure = "Indexing failed on the server (the reason is in its log); re-index the document to try again"

interface Claimed {
  readonly id: string
  readonly organization_id: string
  readonly s3_key: string
  readonly language: string
}

/** What a chunk is searched by: the headings above it say what it is about even when its text does not. */
const searchTextOf = (chunk: TextChunk) => [...chunk.headings, chunk.text].join("\n")

const metadataOf = (chunk: TextChunk) => ({
  page: chunk.page,
  heading: chunk.headings.at(-1) ?? null,
  headings: chunk.headings
})

/**
 * The background indexer: claims pending documents (`FOR UPDATE SKIP LOCKED`, so several processes
 * on one PostgreSQL share the work), extracts their text, chunks, embeds and stores them, with
 * progress and a heartbeat on the row. A document whose indexer died is claimed again once its
 * heartbeat lapses (at once on the embedded database, which one process owns).
 */
export const makeKnowledgeIndexer = (deps: {
  readonly sql: SqlClient.SqlClient
  readonly storage: StorageShape
  readonly modelSettings: ModelSettingsShape
  readonly outbound: OutboundHttpShape
  readonly pgvector: boolean
  readonly onPostgres: boolean
}) =>
  Effect.gen(function*() {
    const { modelSettings, outbound, pgvector, sql, storage } = deps
    const owner = `${crypto.randomUUID()}`
    const wakeUps = yield* Queue.sliding<void>(1)

    const claim = sql<Claimed>`
      UPDATE knowledge_documents
      SET processing_status = 'processing', indexer = ${owner}, heartbeat_at = now(), pages_done = 0,
          processing_error = NULL, updated_at = now()
      WHERE id = (
        SELECT id FROM knowledge_documents
        WHERE processing_status = 'pending'
           OR (processing_status = 'processing'
               AND (heartbeat_at < now() - make_interval(secs => ${LAPSE_SECONDS})
                    ${deps.onPostgres ? sql`` : sql`OR indexer IS DISTINCT FROM ${owner}`}))
        ORDER BY id LIMIT 1 FOR UPDATE SKIP LOCKED)
      RETURNING id, organization_id, s3_key, language`.pipe(Effect.map((rows) => rows[0]))

    const mine = (id: string) => sql`AND id = ${id} AND indexer = ${owner} AND processing_status = 'processing'`

    const markFailed = (id: string, reason: string) =>
      sql`
        UPDATE knowledge_documents
        SET processing_status = 'failed', processing_error = ${reason}, indexer = NULL, heartbeat_at = NULL, updated_at = now()
        WHERE true ${mine(id)}`

    const progress = (id: string, pagesDone: number, totalPages: number) =>
      sql`
        UPDATE knowledge_documents SET pages_done = ${pagesDone}, total_pages = ${totalPages}, heartbeat_at = now()
        WHERE true ${mine(id)}`.pipe(Effect.asVoid)

    const readAll = (key: string) =>
      Effect.scoped(Effect.gen(function*() {
        const body = yield* storage.read(key)
        return yield* Effect.promise(async () => {
          const pieces: Array<Buffer> = []
          for await (const piece of body as AsyncIterable<Buffer>) pieces.push(piece)
          return Buffer.concat(pieces)
        })
      }))

    const embedAll = (organizationId: number, texts: ReadonlyArray<string>) =>
      Effect.gen(function*() {
        const connection = yield* modelSettings.embeddingsFor(organizationId)
        if (Option.isNone(connection)) return { model: null, vectors: null }
        const vectors: Array<Array<number>> = []
        for (let start = 0; start < texts.length; start += EMBEDDING_BATCH) {
          const batch = texts.slice(start, start + EMBEDDING_BATCH)
          vectors.push(
            ...(yield* Effect.tryPromise({
              try: () => embedTexts(outbound, connection.value, batch),
              catch: (error) => error instanceof EmbeddingsFailed ? error : new EmbeddingsFailed(String(error))
            }))
          )
        }
        return { model: connection.value.model, vectors }
      })

    /** Dimensions whose HNSW index this process has seen made: CREATE INDEX IF NOT EXISTS still locks the table. */
    const indexedDimensions = new Set<number>()

    /**
     * The index for the vectors' dimension, made before they are stored so they go into it. A failure
     * (another process making it at the same moment) only costs speed: searches rank without it.
     */
    const indexVectorsOf = (vectors: ReadonlyArray<ReadonlyArray<number>> | null) => {
      const dimensions = vectors?.[0]?.length
      if (!pgvector || dimensions === undefined || indexedDimensions.has(dimensions)) return Effect.void
      return ensureVectorIndex(sql, dimensions).pipe(
        Effect.tap(() => Effect.sync(() => indexedDimensions.add(dimensions))),
        Effect.catchAllCause((cause) => Effect.logWarning("Knowledge indexing: the vector index was not made", cause))
      )
    }

    /** Replaces the document's chunks and completes it, in one transaction: searches see the old chunks or the new. */
    const store = (
      document: Claimed,
      chunks: ReadonlyArray<TextChunk>,
      embedded: { model: string | null; vectors: ReadonlyArray<ReadonlyArray<number>> | null },
      facts: { hash: string; totalPages: number | null }
    ) =>
      sql.withTransaction(Effect.gen(function*() {
        const [held] = yield* sql`SELECT id FROM knowledge_documents WHERE true ${mine(document.id)} FOR UPDATE`
        if (!held) return
        yield* sql`DELETE FROM knowledge_chunks WHERE document_id = ${document.id}`
        for (let start = 0; start < chunks.length; start += INSERT_BATCH) {
          const rows = chunks.slice(start, start + INSERT_BATCH).map((chunk, offset) => ({
            chunk_index: start + offset,
            chunk_text: chunk.text,
            chunk_metadata: metadataOf(chunk),
            search_text: searchTextOf(chunk),
            embedding: embedded.vectors ? `[${embedded.vectors[start + offset]!.join(",")}]` : null
          }))
          yield* sql`
            INSERT INTO knowledge_chunks (document_id, organization_id, chunk_index, chunk_text, chunk_metadata, search_vector,
                                          ${pgvector ? sql`embedding_vector` : sql`embedding`})
            SELECT ${document.id}, ${document.organization_id}, r.chunk_index, r.chunk_text, r.chunk_metadata,
                   to_tsvector(${document.language}::regconfig, r.search_text),
                   ${
            pgvector ? sql`r.embedding::vector` : sql`('{' || trim(both '[]' from r.embedding) || '}')::real[]`
          }
            FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
              AS r(chunk_index integer, chunk_text text, chunk_metadata jsonb, search_text text, embedding text)`
        }
        yield* sql`
          UPDATE knowledge_documents
          SET processing_status = 'completed', processing_error = NULL, total_chunks = ${chunks.length},
              total_pages = ${facts.totalPages}, pages_done = COALESCE(${facts.totalPages}, 1),
              file_hash = ${facts.hash}, embedding_model = ${embedded.model}, indexer = NULL, heartbeat_at = NULL,
              updated_at = now()
          WHERE id = ${document.id}`
      }))

    const index = (document: Claimed) =>
      Effect.gen(function*() {
        const key = parseDocumentKey(document.s3_key)
        const kind = key ? kindOfFileName(key.fileName) : undefined
        if (!kind) return yield* markFailed(document.id, "The file type is not one a knowledge base reads")
        const bytes = yield* readAll(document.s3_key)
        const runtime = yield* Effect.runtime<never>()
        const extracted = yield* Effect.tryPromise({
          try: () =>
            extractDocumentText(kind, bytes, (done, total) =>
              done % PROGRESS_EVERY_PAGES === 0 || done === total
                ? Runtime.runPromise(runtime)(progress(document.id, done, total).pipe(Effect.orDie))
                : Promise.resolve()),
          catch: (error) => error
        })
        const chunks = chunkSections(extracted.sections)
        const embedded = yield* embedAll(Number(document.organization_id), chunks.map(searchTextOf))
        yield* indexVectorsOf(embedded.vectors)
        yield* store(document, chunks, embedded, {
          hash: crypto.createHash("sha256").update(bytes).digest("hex"),
          totalPages: extracted.totalPages
        })
      }).pipe(
        Effect.catchAll((error) => {
          if (error instanceof ExtractionRefused) return markFailed(document.id, error.reason)
          if (error instanceof EmbeddingsFailed) {
            return Effect.logWarning("Knowledge indexing: the embeddings endpoint failed", error.message).pipe(
              Effect.zipRight(markFailed(
                document.id,
                "The organization's embeddings endpoint failed while indexing; check the embeddings settings and re-index"
              ))
            )
          }
          return Effect.fail(error)
        }),
        Effect.catchAllCause((cause) =>
          Cause.isInterruptedOnly(cause)
            ? Effect.interrupt
            : Effect.logError("Knowledge indexing failed", cause).pipe(
              Effect.zipRight(markFailed(document.id, serverSideFailure)),
              Effect.catchAllCause(() => Effect.void)
            )
        ),
        Effect.asVoid,
        Effect.withSpan("KnowledgeIndexer.index", { attributes: { documentId: document.id } })
      )

    const heartbeat = (id: string) =>
      sql`UPDATE knowledge_documents SET heartbeat_at = now() WHERE true ${mine(id)}`.pipe(
        Effect.ignore,
        Effect.repeat(Schedule.spaced(HEARTBEAT)),
        Effect.delay(HEARTBEAT)
      )

    /** Indexes documents until none is waiting. */
    const drain: Effect.Effect<void> = Effect.gen(function*() {
      while (true) {
        const document = yield* claim.pipe(Effect.orDie)
        if (!document) return
        yield* Effect.scoped(Effect.zipRight(Effect.forkScoped(heartbeat(document.id)), index(document)))
      }
    })

    yield* Effect.forkScoped(
      drain.pipe(
        Effect.catchAllCause((cause) => Effect.logWarning("Knowledge indexer pass failed", cause)),
        Effect.zipRight(Effect.race(Queue.take(wakeUps), Effect.sleep(POLL))),
        Effect.forever
      )
    )

    return { wake: Queue.offer(wakeUps, undefined).pipe(Effect.asVoid) }
  })
