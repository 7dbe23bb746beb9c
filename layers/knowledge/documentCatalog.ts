import { SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { DocumentCatalog } from "../../services/KnowledgeBase.ts"

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

export const DocumentCatalogLive = Layer.effect(
  DocumentCatalog,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient

    const existing = Effect.fn("DocumentCatalog.existing")(
      function*(organizationId: number, documentUuids: Iterable<string>) {
        // A malformed uuid is simply not found (the graph's own rules name it), never cast.
        const wanted = [...new Set([...documentUuids].map((uuid) => uuid.toLowerCase()))].filter((uuid) =>
          UUID.test(uuid)
        )
        if (wanted.length === 0) return new Set<string>()
        const rows = yield* sql<{ document_uuid: string }>`
          SELECT document_uuid::text AS document_uuid FROM knowledge_documents
          WHERE organization_id = ${organizationId} AND document_uuid IN ${sql.in(wanted)}`
        return new Set(rows.map((row) => row.document_uuid))
      },
      Effect.orDie
    )

    return DocumentCatalog.of({ existing })
  })
)
