/**
 * A question's full-text queries, strictest first: chunks with every word of the question, then
 * with at least two of them, then with any. Ranking every chunk that shares one word with the
 * question (a common word is in most of them) is what made full-text search slow on a large
 * knowledge base; a caller's question rarely shares every word with the passage that answers it
 * either, so the search relaxes tier by tier until it has enough chunks. All tiers are ranked by
 * `ranking`, the ORed words, with which ts_rank_cd rewards chunks that have more of them, closer.
 */
export interface TsqueryTiers {
  readonly tiers: ReadonlyArray<string>
  readonly ranking: string
}

/** Pairs of words grow quadratically; a longer question skips the "two words" tier. */
const MAX_TERMS_FOR_PAIRS = 8

const anyOf = (parts: ReadonlyArray<string>) => parts.map((part) => `(${part})`).join(" | ")
const allOf = (parts: ReadonlyArray<string>) => parts.map((part) => `(${part})`).join(" & ")

const pairsOf = (terms: ReadonlyArray<string>) =>
  terms.flatMap((term, i) => terms.slice(i + 1).map((other) => allOf([term, other])))

/**
 * Tiers from `websearch_to_tsquery`'s output in each text-search configuration the organization's
 * documents use (one string per configuration; the tiers OR them). Its top-level `&`s separate the
 * question's words and quoted phrases; a query with a negation (`!`) or an explicit `or` (`|`) is
 * the caller's own logic and is kept as it is in every tier.
 */
export const tsqueryTiersOf = (perLanguage: ReadonlyArray<string>): TsqueryTiers | undefined => {
  const queries = perLanguage.filter((query) => query.trim() !== "")
  if (queries.length === 0) return undefined
  const parsed = queries.map((query) =>
    query.includes("!") || query.includes(" | ")
      ? { all: query, pairs: query, any: query }
      : ((terms) => ({
        all: allOf(terms),
        pairs: terms.length <= 2
          ? allOf(terms)
          : terms.length <= MAX_TERMS_FOR_PAIRS
          ? anyOf(pairsOf(terms))
          : anyOf(terms),
        any: anyOf(terms)
      }))([...new Set(query.split(" & "))])
  )
  const any = anyOf(parsed.map((query) => query.any))
  const tiers = [
    anyOf(parsed.map((query) => query.all)),
    anyOf(parsed.map((query) => query.pairs)),
    any
  ]
  return { tiers: tiers.filter((tier, i) => tiers.indexOf(tier) === i), ranking: any }
}
