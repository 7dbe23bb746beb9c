import { convert, type FormatCallback } from "html-to-text"
import { getDocumentProxy } from "unpdf"
import type { TextSection } from "../../src/knowledge/chunking.ts"
import type { DocumentKind } from "../../src/knowledge/documentKinds.ts"

/** The file cannot be read as what it says it is; `reason` is shown to the person who uploaded it. */
export class ExtractionRefused extends Error {
  readonly reason: string
  constructor(reason: string) {
    super(reason)
    this.reason = reason
  }
}

export interface ExtractedText {
  readonly sections: ReadonlyArray<TextSection>
  readonly totalPages: number | null
}

/** Headings kept as Markdown `#` lines, so chunks can follow them and name the section they are in. */
const markdownHeading = (level: number): FormatCallback => (elem, walk, builder) => {
  builder.openBlock({ leadingLineBreaks: 2 })
  builder.addLiteral(`${"#".repeat(level)} `)
  walk(elem.children ?? [], builder)
  builder.closeBlock({ trailingLineBreaks: 2 })
}

const htmlAsText = (html: string) =>
  convert(html, {
    wordwrap: false,
    formatters: Object.fromEntries([1, 2, 3, 4, 5, 6].map((level) => [`h${level}`, markdownHeading(level)])),
    selectors: [
      ...[1, 2, 3, 4, 5, 6].map((level) => ({ selector: `h${level}`, format: `h${level}` })),
      { selector: "a", options: { ignoreHref: true } },
      { selector: "img", format: "skip" },
      { selector: "script", format: "skip" },
      { selector: "style", format: "skip" },
      { selector: "nav", format: "skip" }
    ]
  })

const hasText = (sections: ReadonlyArray<TextSection>) => sections.some((section) => /\p{L}|\p{N}/u.test(section.text))

const utf8 = (bytes: Uint8Array) => {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes).replace(/^\uFEFF/, "")
  } catch {
    throw new ExtractionRefused("The file is not UTF-8 text; save it as UTF-8 and upload it again")
  }
}

/**
 * A PDF page by page, each handed to `onPage` as it is read (the indexer reports progress); pdf.js
 * yields between pages, so a long PDF does not hold the event loop for its whole length.
 */
const pdfText = async (bytes: Uint8Array, onPage: (done: number, total: number) => Promise<void>) => {
  let proxy
  try {
    proxy = await getDocumentProxy(new Uint8Array(bytes))
  } catch (error) {
    const message = error instanceof Error ? error.message : ""
    throw new ExtractionRefused(
      /password/i.test(message)
        ? "The PDF is password-protected; upload it without a password"
        : "The file is not a valid PDF (it could not be opened)"
    )
  }
  try {
    const sections: Array<TextSection> = []
    for (let page = 1; page <= proxy.numPages; page++) {
      const content = await (await proxy.getPage(page)).getTextContent()
      let text = ""
      for (const item of content.items) {
        if (!("str" in item)) continue
        text += item.str
        if (item.hasEOL) text += "\n"
      }
      sections.push({ page, text })
      await onPage(page, proxy.numPages)
    }
    if (!hasText(sections)) {
      throw new ExtractionRefused(
        "The PDF has no text layer (a scanned PDF without text): run it through OCR and upload the result"
      )
    }
    return { sections, totalPages: proxy.numPages }
  } finally {
    await proxy.cleanup()
  }
}

const docxText = async (bytes: Uint8Array) => {
  let html: string
  try {
    // Loaded on the first DOCX, not at start: most servers never see one.
    const { default: mammoth } = await import("mammoth")
    html = (await mammoth.convertToHtml({ buffer: Buffer.from(bytes) })).value
  } catch {
    throw new ExtractionRefused("The file is not a valid DOCX document (Word 2007 or later); it could not be opened")
  }
  return [{ page: null, text: htmlAsText(html) }]
}

/** The text of a document, by kind; refuses with a reason a person understands when there is none to read. */
export const extractDocumentText = async (
  kind: DocumentKind,
  bytes: Uint8Array,
  onPage: (done: number, total: number) => Promise<void>
): Promise<ExtractedText> => {
  if (bytes.length === 0) throw new ExtractionRefused("The file is empty")
  if (kind === "pdf") return pdfText(bytes, onPage)
  const sections: ReadonlyArray<TextSection> = kind === "docx"
    ? await docxText(bytes)
    : kind === "html"
    ? [{ page: null, text: htmlAsText(utf8(bytes)) }]
    : [{ page: null, text: utf8(bytes) }]
  if (!hasText(sections)) throw new ExtractionRefused("The document contains no text")
  return { sections, totalPages: null }
}
