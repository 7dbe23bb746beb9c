import { type HeaderLine, HeaderLineScanner, separatorHint, sniffDelimiter } from "./csvDelimiter.ts"

/** The file cannot be used as it is; every problem found, each with its row numbers. */
export class CsvContactsInvalid extends Error {
  readonly problems: ReadonlyArray<string>
  constructor(problems: ReadonlyArray<string>) {
    super(problems.join("; "))
    this.problems = problems
  }
}

/**
 * Text is handed on in pieces of at most this many bytes: a longer string would be allocated in
 * V8's large-object space, where each one stays until a full garbage collection, and a million
 * rows' worth of them made the heap swell by hundreds of megabytes.
 */
const TEXT_PIECE_BYTES = 32 * 1024

/**
 * The longest line (characters between line breaks) a contacts CSV may have. The parser's record
 * size limit counts field text only, so a line of nothing but delimiters (a million empty columns)
 * would still become an array of that many fields; bounding the line bounds that too.
 */
export const MAX_LINE_CHARS = 1024 * 1024

const lineLimitProblem = (offset: number) =>
  new CsvContactsInvalid([
    `The file has a line longer than ${MAX_LINE_CHARS.toLocaleString("en-US")} characters (after byte ${offset}); ` +
    "a contacts CSV has one contact per line"
  ])

/** Index of the first line break in `text`, or -1. */
const firstBreak = (text: string) => {
  const lf = text.indexOf("\n")
  const cr = text.indexOf("\r")
  return lf < 0 ? cr : cr < 0 ? lf : Math.min(lf, cr)
}

const lastBreak = (text: string) => Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r"))

/**
 * Bytes to text, refusing what is not UTF-8 text: a CSV saved as UTF-16 or Latin-1, or a binary
 * file uploaded by mistake, would otherwise turn into garbled contacts. Each chunk is checked
 * whole before any of it is handed on, line lengths included.
 */
export async function* utf8Text(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true })
  let offset = 0
  let first = true
  let lineSoFar = 0
  for await (const chunk of source) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk
    if (
      first && bytes.length >= 2 &&
      ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
    ) {
      throw new CsvContactsInvalid(["The file is UTF-16 text; save the CSV as UTF-8"])
    }
    first = bytes.length === 0 && first
    const pieces: Array<string> = []
    try {
      for (let start = 0; start < bytes.length; start += TEXT_PIECE_BYTES) {
        const piece = decoder.decode(bytes.subarray(start, start + TEXT_PIECE_BYTES), { stream: true })
        if (piece !== "") pieces.push(piece)
      }
    } catch {
      throw new CsvContactsInvalid([
        `The file is not UTF-8 text (invalid byte sequence after byte ${offset}); save the CSV as UTF-8`
      ])
    }
    for (const piece of pieces) {
      if (piece.includes("\u0000")) {
        throw new CsvContactsInvalid(["The file is binary (it contains NUL bytes), not a CSV text file"])
      }
      // A piece is far shorter than the limit, so only a line running across pieces can exceed it.
      const opening = firstBreak(piece)
      if (lineSoFar + (opening < 0 ? piece.length : opening) > MAX_LINE_CHARS) throw lineLimitProblem(offset)
      lineSoFar = opening < 0 ? lineSoFar + piece.length : piece.length - lastBreak(piece) - 1
    }
    offset += bytes.length
    yield* pieces
  }
  try {
    const rest = decoder.decode()
    if (rest !== "") yield rest
  } catch {
    throw new CsvContactsInvalid([
      "The file is not UTF-8 text (it ends inside a multi-byte character); save the CSV as UTF-8"
    ])
  }
}

interface DelimitedText {
  readonly delimiter: string
  /** Fields of the header row, when it was read ahead (after a `sep=` line it is not). */
  readonly columns: number | undefined
  /** The text from the header on (an Excel `sep=` line taken out). */
  readonly text: AsyncIterable<string>
}

async function* replay(head: string, rest: AsyncIterator<string>): AsyncGenerator<string> {
  try {
    if (head !== "") yield head
    while (true) {
      const next = await rest.next()
      if (next.done) return
      yield next.value
    }
  } finally {
    await rest.return?.()
  }
}

/**
 * Reads ahead to the end of the header row, decides the delimiter from it, and hands the text on
 * whole. The read-ahead is bounded by the line limit `utf8Text` enforces.
 */
export const delimitedText = async (text: AsyncIterable<string>, phoneColumn: string): Promise<DelimitedText> => {
  const pieces = text[Symbol.asyncIterator]()
  const scanner = new HeaderLineScanner()
  let header: HeaderLine | undefined
  let done = false
  while (header === undefined && !done) {
    const next = await pieces.next()
    if (next.done) done = true
    header = done ? scanner.end() : scanner.feed(next.value ?? "")
  }
  if (header === undefined) return { delimiter: ",", columns: undefined, text: replay(scanner.head, pieces) }
  const line = scanner.head.slice(header.start, header.end)
  const hint = separatorHint(line)
  if (hint === undefined) return { ...sniffDelimiter(line, phoneColumn), text: replay(scanner.head, pieces) }
  // The hint line is dropped with its line break, so the header is row 1 as Excel shows it.
  let head = scanner.head
  while (head.length < header.end + 2 && !done) {
    const next = await pieces.next()
    if (next.done) done = true
    else head += next.value
  }
  const after = head.startsWith("\r\n", header.end) ? header.end + 2 : header.end + 1
  return { delimiter: hint, columns: undefined, text: replay(head.slice(after), pieces) }
}
