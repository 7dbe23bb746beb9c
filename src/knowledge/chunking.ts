/**
 * Splitting extracted text into chunks for retrieval. Text arrives as sections (a PDF page, or a
 * whole DOCX/HTML/Markdown/text document) written as light Markdown: `#` headings, paragraphs
 * separated by blank lines. Chunks follow that structure: a heading starts a new chunk, paragraphs
 * are packed up to the target size, a paragraph too long for one chunk is cut between sentences,
 * and consecutive chunks of one section overlap by a sentence or so, so a fact split across a
 * boundary is still found whole in one of them. A chunk never spans sections, so its page is exact.
 */

export interface TextSection {
  /** The 1-based page the text is on (PDF), or null for documents without pages. */
  readonly page: number | null
  readonly text: string
}

export interface ChunkingRules {
  /** Characters a chunk aims for. */
  readonly targetChars: number
  /** Characters a chunk never exceeds (before overlap). */
  readonly maxChars: number
  /** Characters of the previous chunk repeated at the start of the next, within one section. */
  readonly overlapChars: number
}

export const defaultChunking: ChunkingRules = { targetChars: 900, maxChars: 1400, overlapChars: 180 }

export interface TextChunk {
  readonly text: string
  readonly page: number | null
  /** The headings above the chunk, outermost first. */
  readonly headings: ReadonlyArray<string>
}

const HEADING = /^(#{1,6})\s+(.+?)\s*#*\s*$/

const normalise = (text: string) =>
  text.replace(/\r\n?/g, "\n").replace(/[\t\f\v\u00a0]+/g, " ").replace(/[ ]{2,}/g, " ")

/** Sentences (ending in . ! ? or a line end), each a piece a long paragraph may be cut after. */
const sentencesOf = (paragraph: string): Array<string> =>
  paragraph.match(/[^.!?\n]+(?:[.!?]+["')\]]*|\n|$)/g)?.map((piece) => piece.trim()).filter((piece) => piece !== "") ??
    [paragraph]

/** Cuts a piece with no sentence boundary near enough between words. */
const wordsUpTo = (text: string, maxChars: number): Array<string> => {
  const pieces: Array<string> = []
  let current = ""
  for (const word of text.split(/\s+/)) {
    if (current !== "" && current.length + 1 + word.length > maxChars) {
      pieces.push(current)
      current = ""
    }
    current = current === "" ? word : `${current} ${word}`
    while (current.length > maxChars) {
      pieces.push(current.slice(0, maxChars))
      current = current.slice(maxChars)
    }
  }
  if (current !== "") pieces.push(current)
  return pieces
}

/** A paragraph as pieces no longer than `maxChars`, cut between sentences where possible. */
const piecesOf = (paragraph: string, maxChars: number): Array<string> => {
  if (paragraph.length <= maxChars) return [paragraph]
  return sentencesOf(paragraph).flatMap((sentence) =>
    sentence.length <= maxChars ? [sentence] : wordsUpTo(sentence, maxChars)
  )
}

/** The end of a chunk repeated at the start of the next: whole sentences, or whole words, within the budget. */
export const overlapTail = (text: string, overlapChars: number): string => {
  if (overlapChars <= 0) return ""
  const sentences = sentencesOf(text)
  let tail = ""
  for (let i = sentences.length - 1; i >= 0; i--) {
    const next = tail === "" ? sentences[i]! : `${sentences[i]} ${tail}`
    if (next.length > overlapChars) break
    tail = next
  }
  if (tail !== "" && tail !== text.trim()) return tail
  const words = text.trim().split(/\s+/)
  let wordsTail = ""
  for (let i = words.length - 1; i > 0; i--) {
    const next = wordsTail === "" ? words[i]! : `${words[i]} ${wordsTail}`
    if (next.length > overlapChars) break
    wordsTail = next
  }
  return wordsTail
}

/** Splits sections into chunks; headings carry over from one section (page) to the next. */
export const chunkSections = (
  sections: ReadonlyArray<TextSection>,
  rules: ChunkingRules = defaultChunking
): Array<TextChunk> => {
  const chunks: Array<TextChunk> = []
  let headings: Array<string> = []
  for (const section of sections) {
    let body: Array<string> = []
    let length = 0
    let overlap = ""
    const flush = (carry: boolean) => {
      const text = body.join("\n\n").trim()
      if (text !== "") {
        const withOverlap = overlap === "" ? text : `${overlap} ${text}`
        chunks.push({ text: withOverlap, page: section.page, headings: [...headings] })
        overlap = carry ? overlapTail(text, rules.overlapChars) : ""
      }
      body = []
      length = 0
    }
    const paragraphs = normalise(section.text).split(/\n\s*\n/)
    for (const raw of paragraphs) {
      const lines = raw.split("\n").map((line) => line.trim()).filter((line) => line !== "")
      let prose: Array<string> = []
      const addProse = () => {
        const paragraph = prose.join(" ")
        prose = []
        if (paragraph === "") return
        for (const piece of piecesOf(paragraph, rules.maxChars)) {
          if (length > 0 && length + piece.length > rules.targetChars) flush(true)
          body.push(piece)
          length += piece.length + 2
        }
      }
      for (const line of lines) {
        const heading = HEADING.exec(line)
        if (heading) {
          addProse()
          flush(false)
          const level = heading[1]!.length
          headings = [...headings.slice(0, level - 1), heading[2]!]
          body.push(heading[2]!)
          length += heading[2]!.length + 2
        } else {
          prose.push(line)
        }
      }
      addProse()
    }
    flush(false)
  }
  return chunks
}
