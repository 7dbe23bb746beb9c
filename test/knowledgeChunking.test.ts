import { describe, expect, it } from "vitest"
import { chunkSections, overlapTail } from "../src/knowledge/chunking.ts"
import {
  documentKey,
  kindOfFileName,
  kindOfMediaType,
  parseDocumentKey,
  storedFileName
} from "../src/knowledge/documentKinds.ts"
import { cosineSimilarity, fuseRankings } from "../src/knowledge/rankFusion.ts"

const rules = { targetChars: 120, maxChars: 200, overlapChars: 50 }

describe("chunking", () => {
  it("starts a chunk at each heading and names the headings above it", () => {
    const chunks = chunkSections([{
      page: null,
      text: "# Handbook\n\nWelcome.\n\n## Opening hours\n\nOpen 9 to 6.\n\n## Returns\n\nWithin 30 days."
    }], rules)
    expect(chunks.map((chunk) => [chunk.headings, chunk.text])).toEqual([
      [["Handbook"], "Handbook\n\nWelcome."],
      [["Handbook", "Opening hours"], "Opening hours\n\nOpen 9 to 6."],
      [["Handbook", "Returns"], "Returns\n\nWithin 30 days."]
    ])
  })

  it("packs paragraphs up to the target and overlaps consecutive chunks of a section by whole sentences", () => {
    const paragraphs = Array.from({ length: 6 }, (_, i) => `Paragraph ${i} says one thing. It then says another thing.`)
    const chunks = chunkSections([{ page: 4, text: paragraphs.join("\n\n") }], rules)
    expect(chunks.length).toBeGreaterThan(2)
    for (const chunk of chunks) expect(chunk.page).toBe(4)
    for (let i = 1; i < chunks.length; i++) {
      const previousTail = overlapTail(chunks[i - 1]!.text.replace(/^.*?(Paragraph)/s, "$1"), 50)
      expect(previousTail).toMatch(/^Paragraph \d says|^It then says/)
      expect(chunks[i]!.text.startsWith(`${previousTail} `)).toBe(true)
    }
    const allText = chunks.map((chunk) => chunk.text).join(" ")
    for (const paragraph of paragraphs) expect(allText).toContain(paragraph)
  })

  it("cuts a paragraph longer than the limit between sentences, and a sentence without end between words", () => {
    const sentences = Array.from({ length: 10 }, (_, i) => `Sentence number ${i} is here.`).join(" ")
    const words = Array.from({ length: 80 }, (_, i) => `word${i}`).join(" ")
    const chunks = chunkSections([{ page: null, text: `${sentences}\n\n${words}` }], { ...rules, overlapChars: 0 })
    for (const chunk of chunks) expect(chunk.text.length).toBeLessThanOrEqual(rules.maxChars + rules.targetChars)
    expect(chunks.some((chunk) => /^Sentence number \d is here\./.test(chunk.text))).toBe(true)
    expect(chunks.map((chunk) => chunk.text).join(" ")).toContain("word79")
  })

  it("never lets a chunk span two pages, and carries headings from one page to the next", () => {
    const chunks = chunkSections([
      { page: 1, text: "# Prices\n\nBasic costs 10." },
      { page: 2, text: "Premium costs 20." }
    ], rules)
    expect(chunks).toEqual([
      { page: 1, headings: ["Prices"], text: "Prices\n\nBasic costs 10." },
      { page: 2, headings: ["Prices"], text: "Premium costs 20." }
    ])
  })

  it("makes no chunk of blank pages", () => {
    expect(chunkSections([{ page: 1, text: "  \n\n " }, { page: 2, text: "" }])).toEqual([])
  })
})

describe("document kinds and keys", () => {
  it("tells the kind from the media type or the file name, and keeps the extension in the stored name", () => {
    expect(kindOfMediaType("application/pdf; charset=binary")).toBe("pdf")
    expect(kindOfMediaType("application/vnd.ms-excel")).toBeUndefined()
    expect(kindOfFileName("notes.MD")).toBe("markdown")
    expect(storedFileName("Price list 2024.pdf", "pdf")).toBe("Price-list-2024.pdf")
    expect(storedFileName("handbook", "docx")).toBe("handbook.docx")
    expect(storedFileName("../../etc/passwd", "text")).toBe("etc-passwd.txt")
  })

  it("reads the organization and document back from a key, and refuses other keys", () => {
    const uuid = "0b7c1f62-4a7e-4c59-9d43-3c1e0f5b2a10"
    expect(parseDocumentKey(documentKey(7, uuid, "a.pdf"))).toEqual({
      organizationId: 7,
      documentUuid: uuid,
      fileName: "a.pdf"
    })
    expect(parseDocumentKey(`organizations/7/contacts/${uuid}.csv`)).toBeUndefined()
    expect(parseDocumentKey(`organizations/7/knowledge/${uuid}/../x.pdf`)).toBeUndefined()
  })
})

describe("rank fusion", () => {
  it("ranks an item high in both lists above one first in only one", () => {
    const fused = fuseRankings([["a", "b", "c"], ["b", "d", "a"]])
    expect(fused.map((item) => item.id)).toEqual(["b", "a", "d", "c"])
  })

  it("measures cosine similarity, and 0 for vectors of other sizes", () => {
    expect(cosineSimilarity([1, 0], [1, 0])).toBeCloseTo(1)
    expect(cosineSimilarity([1, 0], [0, 1])).toBeCloseTo(0)
    expect(cosineSimilarity([1, 0], [1, 0, 0])).toBe(0)
  })
})
