/**
 * Splits a streamed reply into pieces worth sending to text-to-speech. The first piece goes as
 * soon as a clause is long enough to sound natural (the caller hears the agent sooner); later
 * pieces are whole sentences, which TTS voices intone better than fragments.
 */
const FIRST_CLAUSE_MIN_CHARS = 20
const SENTENCE_MIN_CHARS = 12

/** Words after which a period does not end a sentence. */
const ABBREVIATIONS = new Set([
  "mr",
  "mrs",
  "ms",
  "dr",
  "prof",
  "sr",
  "jr",
  "st",
  "vs",
  "etc",
  "e.g",
  "i.e",
  "no",
  "approx",
  "inc",
  "ltd"
])

const isSentenceEnd = (text: string, index: number): boolean => {
  const char = text[index]!
  if (char === "!" || char === "?") return true
  if (char !== ".") return false
  // A decimal number ("3.5") or an abbreviation ("Dr. Smith") is not the end of a sentence.
  const next = text[index + 1]
  if (next !== undefined && /\d/.test(next)) return false
  const word = /([A-Za-z.]+)$/.exec(text.slice(0, index))?.[1]?.toLowerCase()
  if (word !== undefined && (ABBREVIATIONS.has(word) || word.length === 1)) return false
  return true
}

/** Where the piece may end: after closing punctuation and quotes, at the following whitespace. */
const boundaryAfter = (text: string, index: number): number | null => {
  let end = index + 1
  while (end < text.length && /[.!?"'”’)]/.test(text[end]!)) end++
  if (end >= text.length) return null
  return /\s/.test(text[end]!) ? end : null
}

interface SentenceChunker {
  /** Adds streamed text; answers the pieces now complete. */
  readonly push: (text: string) => ReadonlyArray<string>
  /** The rest, at the end of the reply. */
  readonly flush: () => ReadonlyArray<string>
}

export const sentenceChunker = (): SentenceChunker => {
  let buffer = ""
  let first = true

  const take = (end: number) => {
    const piece = buffer.slice(0, end).trim()
    buffer = buffer.slice(end).replace(/^\s+/, "")
    first = false
    return piece
  }

  const push = (text: string) => {
    buffer += text
    const pieces: Array<string> = []
    for (let index = 0; index < buffer.length; index++) {
      const char = buffer[index]!
      const clause = first && (char === "," || char === ";" || char === ":" || char === "—") &&
        index + 1 >= FIRST_CLAUSE_MIN_CHARS
      if (!clause && !isSentenceEnd(buffer, index)) continue
      const end = clause ? (/\s/.test(buffer[index + 1] ?? "") ? index + 1 : null) : boundaryAfter(buffer, index)
      if (end === null || buffer.slice(0, end).trim().length < (first && !clause ? 1 : SENTENCE_MIN_CHARS)) continue
      const piece = take(end)
      if (piece) pieces.push(piece)
      // The buffer now starts after the piece: scan it from its start.
      index = -1
    }
    return pieces
  }

  const flush = () => {
    const rest = buffer.trim()
    buffer = ""
    first = true
    return rest ? [rest] : []
  }

  return { push, flush }
}
