/** The kinds of document a knowledge base reads, and how each arrives. */
export type DocumentKind = "pdf" | "docx" | "html" | "markdown" | "text"

interface KindRule {
  readonly kind: DocumentKind
  readonly extensions: ReadonlyArray<string>
  readonly mediaTypes: ReadonlyArray<string>
}

const RULES: ReadonlyArray<KindRule> = [
  { kind: "pdf", extensions: [".pdf"], mediaTypes: ["application/pdf"] },
  {
    kind: "docx",
    extensions: [".docx"],
    mediaTypes: ["application/vnd.openxmlformats-officedocument.wordprocessingml.document"]
  },
  { kind: "html", extensions: [".html", ".htm"], mediaTypes: ["text/html", "application/xhtml+xml"] },
  { kind: "markdown", extensions: [".md", ".markdown"], mediaTypes: ["text/markdown", "text/x-markdown"] },
  { kind: "text", extensions: [".txt", ".text"], mediaTypes: ["text/plain"] }
]

export const SUPPORTED_MEDIA_TYPES: ReadonlyArray<string> = RULES.flatMap((rule) => rule.mediaTypes)

const bareMediaType = (mediaType: string) => mediaType.split(";")[0]!.trim().toLowerCase()

const extensionOf = (fileName: string) => {
  const dot = fileName.lastIndexOf(".")
  return dot < 0 ? "" : fileName.slice(dot).toLowerCase()
}

/** The kind a declared media type names, if it is one a knowledge base reads. */
export const kindOfMediaType = (mediaType: string): DocumentKind | undefined =>
  RULES.find((rule) => rule.mediaTypes.includes(bareMediaType(mediaType)))?.kind

/** The kind a stored file's name says it is (its extension). */
export const kindOfFileName = (fileName: string): DocumentKind | undefined =>
  RULES.find((rule) => rule.extensions.includes(extensionOf(fileName)))?.kind

/** The media type a kind is stored and served as. */
export const mediaTypeOfKind = (kind: DocumentKind): string => RULES.find((rule) => rule.kind === kind)!.mediaTypes[0]!

/**
 * The file name a document is stored under: the client's name made safe for a storage key, with the
 * extension of its declared kind (the extension is how the indexer later tells the kind).
 */
export const storedFileName = (fileName: string, kind: DocumentKind): string => {
  const rule = RULES.find((candidate) => candidate.kind === kind)!
  const extension = extensionOf(fileName)
  const stem = (rule.extensions.includes(extension) ? fileName.slice(0, -extension.length) : fileName)
    .replace(/[^A-Za-z0-9._-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "")
    .slice(0, 120)
  return `${stem || "document"}${rule.extensions.includes(extension) ? extension : rule.extensions[0]}`
}

const KEY = /^organizations\/(\d+)\/knowledge\/([0-9a-f-]{36})\/([A-Za-z0-9][A-Za-z0-9._-]{0,200})$/

/** Documents live under their organization's prefix, one folder per document. */
export const documentKey = (organizationId: number, documentUuid: string, fileName: string) =>
  `organizations/${organizationId}/knowledge/${documentUuid}/${fileName}`

/** The parts of a document's storage key, if `key` is one. */
export const parseDocumentKey = (key: string) => {
  const match = KEY.exec(key)
  return match ? { organizationId: Number(match[1]), documentUuid: match[2]!, fileName: match[3]! } : undefined
}
