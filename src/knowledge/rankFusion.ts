/**
 * Reciprocal rank fusion (Cormack, Clarke & Büttcher, SIGIR 2009): each ranking contributes
 * 1 / (k + rank) to an item's score, so an item near the top of both the full-text and the
 * embedding ranking beats one at the top of only one, without comparing their incomparable scores.
 */
export const RRF_K = 60

export const fuseRankings = <Id>(
  rankings: ReadonlyArray<ReadonlyArray<Id>>,
  k: number = RRF_K
): Array<{ readonly id: Id; readonly score: number }> => {
  const scores = new Map<Id, number>()
  for (const ranking of rankings) {
    ranking.forEach((id, index) => scores.set(id, (scores.get(id) ?? 0) + 1 / (k + index + 1)))
  }
  return [...scores.entries()]
    .map(([id, score]) => ({ id, score }))
    .sort((a, b) => b.score - a.score)
}

/** Cosine similarity of two embeddings of one model; 0 when either has no length or they differ in size. */
export const cosineSimilarity = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): number => {
  if (a.length !== b.length || a.length === 0) return 0
  let dot = 0
  let normA = 0
  let normB = 0
  for (let i = 0; i < a.length; i++) {
    dot += a[i]! * b[i]!
    normA += a[i]! * a[i]!
    normB += b[i]! * b[i]!
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB)
}
