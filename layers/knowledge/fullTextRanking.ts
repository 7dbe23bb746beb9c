import type { SqlClient } from "@effect/sql"
import { Effect } from "effect"
import { tsqueryTiersOf } from "../../src/knowledge/tsqueryTiers.ts"
import { documentFilter, type SearchRequest } from "./searchRequest.ts"

/**
 * A tier ranks at most this many of its matches (the first the index yields). A tier has more
 * only when the question's words are common ones, found together in a large share of a big
 * knowledge base; ranking all of those (reading each one's text vector) is what made such a
 * question slow, a third of a second at 100,000 chunks, while these chunks hold the same words
 * and differ little in rank.
 */
const RANKED_AT_MOST = 500

export interface FullTextHit {
  readonly id: string
  readonly rank: number
}

/**
 * The organization's chunks that best match the question's words, strictest tier first (see
 * `tsqueryTiersOf`): a tier is searched only while the stricter ones found fewer chunks than the
 * request's limit, so a question ranks the few chunks that share most of its words rather than the
 * tens of thousands that share one common word.
 */
export const makeFullTextRanking = (sql: SqlClient.SqlClient) => {
  /** `websearch_to_tsquery` of the question in every text-search configuration the organization's documents use. */
  const perLanguage = (request: SearchRequest) =>
    Effect.map(
      sql<{ query: string }>`
        SELECT DISTINCT websearch_to_tsquery(l.language::regconfig, ${request.query})::text AS query
        FROM (SELECT DISTINCT language FROM knowledge_documents WHERE organization_id = ${request.organizationId}) l`,
      (rows) => rows.map((row) => row.query).sort()
    )

  return (request: SearchRequest, candidates: number) =>
    Effect.gen(function*() {
      const tiers = tsqueryTiersOf(yield* perLanguage(request))
      if (!tiers) return []
      const found: Array<FullTextHit> = []
      for (const tier of tiers.tiers) {
        const seen = found.map((hit) => hit.id)
        const hits = yield* sql<FullTextHit>`
          SELECT c.id, ts_rank_cd(c.search_vector, ${tiers.ranking}::tsquery) AS rank
          FROM (
            SELECT c.id, c.search_vector FROM knowledge_chunks c
            WHERE c.organization_id = ${request.organizationId} AND c.search_vector @@ ${tier}::tsquery
              ${seen.length > 0 ? sql`AND c.id NOT IN ${sql.in(seen)}` : sql``}
              ${documentFilter(sql, request)}
            LIMIT ${RANKED_AT_MOST}
          ) c
          ORDER BY rank DESC, c.id
          LIMIT ${candidates - found.length}`
        found.push(...hits.map((hit) => ({ id: String(hit.id), rank: Number(hit.rank) })))
        if (found.length >= Math.min(request.limit, candidates)) break
      }
      return found
    })
}
