/**
 * Which character separates the fields of a contacts CSV. Excel writes `;` wherever the decimal
 * separator is a comma (most of Europe, Latin America), and some exports use tabs; the file does
 * not say which, so it is read off the header row. Excel's own hint, a first line `sep=;`, wins.
 */
type CsvDelimiter = "," | ";" | "\t"

const CANDIDATES: ReadonlyArray<CsvDelimiter> = [",", ";", "\t"]

const isLineBreak = (char: string) => char === "\n" || char === "\r"

/** Fields of one line split on `delimiter`, quotes respected (a quoted delimiter is text). */
const fieldsOf = (line: string, delimiter: string): Array<string> => {
  const fields: Array<string> = []
  let current = ""
  let quoted = false
  for (let i = 0; i < line.length; i++) {
    const char = line[i]!
    if (char === "\"") {
      if (quoted && line[i + 1] === "\"") {
        current += char
        i++
      } else {
        quoted = !quoted
      }
    } else if (char === delimiter && !quoted) {
      fields.push(current)
      current = ""
    } else {
      current += char
    }
  }
  fields.push(current)
  return fields
}

export interface HeaderLine {
  /** Where the header line starts and ends (before its line break) in the text fed so far. */
  readonly start: number
  readonly end: number
}

/**
 * Finds the header line (the first line with something other than spaces and delimiters on it,
 * ending at a line break outside quotes) in text fed piece by piece, each character looked at once.
 */
export class HeaderLineScanner {
  private text = ""
  private position = 0
  private lineStart = 0
  private quoted = false
  private content = false

  /** Adds text; the header line once it is complete, else `undefined`. */
  feed(piece: string): HeaderLine | undefined {
    if (this.text === "" && piece.startsWith("\uFEFF")) this.lineStart = this.position = 1
    this.text += piece
    for (; this.position < this.text.length; this.position++) {
      const char = this.text[this.position]!
      if (char === "\"") {
        this.quoted = !this.quoted
        this.content = true
      } else if (!this.quoted && isLineBreak(char)) {
        if (this.content) return { start: this.lineStart, end: this.position }
        this.lineStart = this.position + 1
      } else if (!this.content && char.trim() !== "" && !CANDIDATES.includes(char as CsvDelimiter)) {
        this.content = true
      }
    }
    return undefined
  }

  /** At the end of the text: the header line if the text ends inside it. */
  end(): HeaderLine | undefined {
    return this.content ? { start: this.lineStart, end: this.text.length } : undefined
  }

  /** Everything fed so far. */
  get head() {
    return this.text
  }
}

/** Excel's `sep=X` first line, which names the delimiter and is not part of the data. */
export const separatorHint = (line: string): string | undefined => /^sep=([^"\r\n])\s*$/i.exec(line)?.[1]

/**
 * The delimiter of a header line, and its number of columns under it: the one that makes `phone_number` a column of its own when
 * exactly one does (a column name may hold another candidate), else the most frequent outside
 * quotes, commas winning ties.
 */
export const sniffDelimiter = (
  headerLine: string,
  phoneColumn: string
): { readonly delimiter: string; readonly columns: number } => {
  const split = CANDIDATES.map((delimiter) => ({ delimiter, fields: fieldsOf(headerLine, delimiter) }))
  const naming = split.filter(({ fields }) =>
    fields.length > 1 && fields.some((field) => field.trim().toLowerCase() === phoneColumn)
  )
  let best = split[0]!
  if (naming.length === 1) best = naming[0]!
  else for (const candidate of split) if (candidate.fields.length > best.fields.length) best = candidate
  return { delimiter: best.delimiter, columns: best.fields.length }
}
