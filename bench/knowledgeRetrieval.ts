/**
 * Knowledge bases: ingest rate and retrieval latency.
 *
 * Ingest: text extraction and chunking of a generated 200-page PDF (unpdf) and a DOCX of 200
 * headed sections (mammoth), in pages (sections) per second — the CPU work of the indexer.
 * Retrieval: `KnowledgeBase.search` (the code the API and conversations use) over an organization
 * with 10,000 chunks (and 100,000 with `--full`), full-text only and hybrid (full text fused with
 * embeddings from a loopback `/embeddings` stand-in, 256 dimensions), p50/p99 over 200 questions.
 * Vectors are ranked by pgvector on PGlite, in the application on a PostgreSQL without it.
 *
 *   npx tsx bench/knowledgeRetrieval.ts [--full] [--queries=N]
 *   DATABASE_URL=postgres://… npx tsx bench/knowledgeRetrieval.ts [--full] [--queries=N]   (a scratch database is created and dropped)
 *
 * `--queries=N` times N questions instead of 200, to bound a slow configuration's run (p99 of fewer
 * questions is a coarser figure: with 50 it is the second-slowest).
 */
import { SqlClient } from "@effect/sql"
import { ConfigProvider, Effect, Layer } from "effect"
import * as crypto from "node:crypto"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { ServicesLive } from "../app/appLayer.ts"
import { AppConfigLive } from "../app/config.ts"
import { extractDocumentText } from "../layers/knowledge/documentText.ts"
import { ensureVectorIndex } from "../layers/knowledge/vectorIndexes.ts"
import { KnowledgeBase } from "../services/KnowledgeBase.ts"
import { ModelSettings } from "../services/ModelSettings.ts"
import { PublicUrl } from "../services/PublicUrl.ts"
import { OrganizationId } from "../src/domain/ids.ts"
import type { Principal } from "../src/domain/principal.ts"
import { allScopes } from "../src/domain/scopes.ts"
import { chunkSections } from "../src/knowledge/chunking.ts"
import { HASHED_DIMENSIONS, hashedEmbedding } from "../test/support/hashedEmbeddings.ts"
import { shopDocxOf, twoHundredPagePdf } from "../test/support/knowledgeDocuments.ts"
import { createOwnDatabase } from "../test/support/ownDatabase.ts"
import { startScriptedLlm } from "../test/support/scriptedLlm.ts"
import { databaseName, type Figure, reportFigures } from "./support/figures.ts"

const full = process.argv.includes("--full")
const sizes = full ? [10_000, 100_000] : [10_000]
const QUERIES = Number(process.argv.find((arg) => arg.startsWith("--queries="))?.slice("--queries=".length) ?? 200)
const INSERT_BATCH = 1000

/** A vocabulary with a long tail, so some words are common (long posting lists) and most are rare. */
const vocabulary = Array.from({ length: 5000 }, (_, i) => `term${i.toString(36)}`)
const word = (random: () => number) => vocabulary[Math.floor(vocabulary.length * random() ** 3)]!
const seeded = (seed: number) => () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31
  return seed / 2 ** 31
}

const percentile = (sorted: ReadonlyArray<number>, p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!

const ingestFigures = async (): Promise<Array<Figure>> => {
  const figures: Array<Figure> = []
  const pdf = await twoHundredPagePdf()
  const docx = await shopDocxOf(200)
  for (const [name, kind, bytes] of [["PDF", "pdf", pdf], ["DOCX", "docx", docx]] as const) {
    const started = performance.now()
    const extracted = await extractDocumentText(kind, bytes, async () => {})
    const chunks = chunkSections(extracted.sections)
    const seconds = (performance.now() - started) / 1000
    figures.push({
      name: `ingest ${name}: 200 ${kind === "pdf" ? "pages" : "sections"}`,
      value: Math.round(200 / seconds),
      unit: "pages/s"
    })
    console.log(`${name}: ${chunks.length} chunks in ${(seconds * 1000).toFixed(0)} ms`)
  }
  return figures
}

const main = async () => {
  const suiteUrl = process.env.DATABASE_URL
  const own = suiteUrl ? await createOwnDatabase(suiteUrl) : undefined
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), "talkgraph-bench-"))
  const llm = await startScriptedLlm()
  const settings: Record<string, string> = {
    TALKGRAPH_DATA_DIR: dataDir,
    LOG_LEVEL: "error",
    TALKGRAPH_OUTBOUND_ALLOW: "loopback",
    ...(own ? { DATABASE_URL: own.url, TALKGRAPH_SECRET_KEY: "bench-secret-key-bench-secret-key-0123456789" } : {})
  }
  const layer = ServicesLive.pipe(
    Layer.provide(Layer.succeed(PublicUrl, "http://127.0.0.1:8000")),
    Layer.provide(AppConfigLive),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(settings)))))
  )
  const figures: Array<Figure> = await ingestFigures()
  let serverVersion: string | undefined
  let ranking = "application"
  try {
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const context = yield* Layer.build(layer)
      const run = <A, E>(effect: Effect.Effect<A, E, any>) => Effect.provide(effect, context) as Effect.Effect<A, E>
      const sql = yield* run(SqlClient.SqlClient)
      const knowledge = yield* run(KnowledgeBase)
      const modelSettings = yield* run(ModelSettings)
      serverVersion = (yield* sql<{ server_version: string }>`SHOW server_version`)[0]?.server_version
      const [vector] = yield* sql<{ present: boolean }>`
        SELECT EXISTS (SELECT 1 FROM information_schema.columns
                       WHERE table_name = 'knowledge_chunks' AND column_name = 'embedding_vector') AS present`
      if (vector?.present) ranking = "pgvector"
      for (const size of sizes) {
        const [org] = yield* sql<{ id: number }>`INSERT INTO organizations (name) VALUES ('bench') RETURNING id`
        const organizationId = org!.id
        const [document] = yield* sql<{ id: number }>`
          INSERT INTO knowledge_documents (organization_id, document_uuid, filename, mime_type, file_size_bytes, s3_key,
            retrieval_mode, language, processing_status, embedding_model, created_at, updated_at)
          VALUES (${organizationId}, ${crypto.randomUUID()}, 'bench.txt', 'text/plain', 0, 'bench', 'chunked', 'english',
            'completed', 'bench-embeddings', now(), now())
          RETURNING id`
        const random = seeded(size)
        // Loaded like a bulk import: the HNSW index is built over the loaded vectors (faster than
        // inserting 100,000 vectors one by one into it), as the indexer's first document of a dimension does.
        if (vector?.present) {
          yield* sql`DROP INDEX IF EXISTS knowledge_chunks_embedding_${sql.literal(String(HASHED_DIMENSIONS))}`
        }
        const loadStarted = performance.now()
        for (let start = 0; start < size; start += INSERT_BATCH) {
          const rows = Array.from({ length: Math.min(INSERT_BATCH, size - start) }, (_, offset) => {
            const text = Array.from({ length: 120 }, () => word(random)).join(" ")
            return {
              chunk_index: start + offset,
              chunk_text: text,
              chunk_metadata: { page: null },
              embedding: `[${hashedEmbedding(text).map((x) => x.toFixed(5)).join(",")}]`
            }
          })
          yield* sql`
            INSERT INTO knowledge_chunks (document_id, organization_id, chunk_index, chunk_text, chunk_metadata, search_vector,
                                          ${vector?.present ? sql`embedding_vector` : sql`embedding`})
            SELECT ${document!.id}, ${organizationId}, r.chunk_index, r.chunk_text, r.chunk_metadata,
                   to_tsvector('english', r.chunk_text),
                   ${
            vector?.present
              ? sql`r.embedding::vector`
              : sql`('{' || trim(both '[]' from r.embedding) || '}')::real[]`
          }
            FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
              AS r(chunk_index integer, chunk_text text, chunk_metadata jsonb, search_text text, embedding text)`
        }
        console.log(`${size} chunks loaded in ${((performance.now() - loadStarted) / 1000).toFixed(1)} s`)
        if (vector?.present) {
          const indexStarted = performance.now()
          yield* sql.withTransaction(Effect.zipRight(
            sql`SET LOCAL maintenance_work_mem = '512MB'`,
            ensureVectorIndex(sql, HASHED_DIMENSIONS)
          ))
          const seconds = (performance.now() - indexStarted) / 1000
          const [stored] = yield* sql<{ count: string }>`SELECT count(*) FROM knowledge_chunks`
          figures.push({
            name: `HNSW index build, ${Number(stored!.count) / 1000}k vectors`,
            value: Number(seconds.toFixed(1)),
            unit: "s"
          })
        }
        yield* sql`ANALYZE knowledge_chunks`
        const principal: Principal = {
          userId: 0,
          organizationId: OrganizationId.make(organizationId),
          role: "owner",
          via: "session",
          sessionId: null,
          apiKeyId: null,
          scopes: allScopes
        }
        const questions = Array.from({ length: QUERIES }, () => `${word(random)} ${word(random)} ${word(random)}`)
        for (const mode of ["full-text", "hybrid"] as const) {
          if (mode === "hybrid") {
            yield* modelSettings.put(principal, {
              embeddings: { provider: "openai", model: "bench-embeddings", base_url: llm.baseUrl, api_key: "sk-bench" }
            })
          }
          for (const question of questions.slice(0, 10)) yield* knowledge.search(organizationId, { query: question })
          const times: Array<number> = []
          for (const question of questions) {
            const started = performance.now()
            const result = yield* knowledge.search(organizationId, { query: question, limit: 5 })
            times.push(performance.now() - started)
            if (result.retrieval !== (mode === "hybrid" ? "hybrid" : "full_text")) {
              throw new Error("wrong retrieval mode")
            }
          }
          times.sort((a, b) => a - b)
          const label = `${size / 1000}k chunks, ${mode}${mode === "hybrid" ? ` (${ranking})` : ""}`
          const target = size === 100_000
            ? mode === "full-text" && suiteUrl
              ? "<= 50"
              : mode === "hybrid" && ranking === "pgvector"
              ? "<= 100"
              : undefined
            : undefined
          figures.push({ name: `${label} p50`, value: Number(percentile(times, 0.5).toFixed(1)), unit: "ms" })
          figures.push({
            name: `${label} p99`,
            value: Number(percentile(times, 0.99).toFixed(1)),
            unit: "ms",
            ...(target ? { target } : {})
          })
        }
      }
    })))
  } finally {
    await llm.close()
    await own?.drop()
    await fsp.rm(dataDir, { recursive: true, force: true })
  }
  reportFigures("knowledge base ingest and retrieval", databaseName(suiteUrl, serverVersion), figures)
}

main().catch((error) => {
  console.error(error)
  process.exit(1)
})
