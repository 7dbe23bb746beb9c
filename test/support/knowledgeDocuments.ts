import { Document, HeadingLevel, Packer, Paragraph } from "docx"
import { PDFDocument, StandardFonts } from "pdf-lib"
import type { Client, Credentials } from "./client.ts"

/** The page of the generated PDF that alone says what the premium plan includes. */
export const SSO_PAGE = 137

/** A 200-page PDF: filler terms on every page, one page with the answer about single sign-on. */
export const twoHundredPagePdf = async (): Promise<Uint8Array> => {
  const pdf = await PDFDocument.create()
  const font = await pdf.embedFont(StandardFonts.Helvetica)
  for (let page = 1; page <= 200; page++) {
    const sheet = pdf.addPage([595, 842])
    const lines = page === SSO_PAGE
      ? [
        `Plans and features, page ${page}.`,
        "The premium plan includes single sign-on (SSO) with Okta and Azure AD,",
        "and audit logs kept for one year."
      ]
      : [
        `General terms, page ${page}.`,
        `Clause ${page} describes invoicing periods, payment terms and late fees`,
        `for orders placed through the reseller network in region ${page % 7}.`
      ]
    lines.forEach((line, index) => sheet.drawText(line, { x: 50, y: 780 - index * 18, size: 12, font }))
  }
  return pdf.save()
}

/** A PDF of blank pages: what a scan without OCR looks like to a text extractor. */
export const scannedPdf = async (): Promise<Uint8Array> => {
  const pdf = await PDFDocument.create()
  for (let page = 0; page < 3; page++) pdf.addPage([595, 842])
  return pdf.save()
}

/** A DOCX with headed sections: opening hours and returns, then `extraSections` of filler policies. */
export const shopDocxOf = async (extraSections: number): Promise<Uint8Array> => {
  const document = new Document({
    sections: [{
      children: [
        new Paragraph({ text: "Customer handbook", heading: HeadingLevel.HEADING_1 }),
        new Paragraph({ text: "Opening hours", heading: HeadingLevel.HEADING_2 }),
        new Paragraph(
          "Our Lisbon shop is open Monday to Friday from 9 am to 6 pm and on Saturdays from 10 am to 2 pm."
        ),
        new Paragraph({ text: "Returns", heading: HeadingLevel.HEADING_2 }),
        new Paragraph("Unused items can be returned within 30 days with the receipt for a full refund."),
        ...Array.from({ length: extraSections }, (_, i) => [
          new Paragraph({ text: `Policy ${i + 1}`, heading: HeadingLevel.HEADING_2 }),
          new Paragraph(`Policy ${i + 1} sets out how staff handle invoices, deliveries and complaints in branch ${i}.`)
        ]).flat()
      ]
    }]
  })
  return new Uint8Array(await Packer.toBuffer(document))
}

export const shopDocx = () => shopDocxOf(0)

export const PDF_TYPE = "application/pdf"
export const DOCX_TYPE = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"

/** Upload URL, PUT, process-document: what a client of Dograh's knowledge-base API does. */
export const uploadDocument = async (
  api: Client,
  credentials: Credentials,
  filename: string,
  mimeType: string,
  bytes: Uint8Array | string,
  /** A document_uuid to keep, as for a document moved from Dograh. */
  documentUuid?: string
) => {
  const grant = await api.post("/api/v1/knowledge-base/upload-url", {
    filename,
    mime_type: mimeType,
    ...(documentUuid === undefined ? {} : { document_uuid: documentUuid })
  }, credentials)
  if (grant.status !== 200) throw new Error(`upload-url failed: ${grant.status} ${JSON.stringify(grant.body)}`)
  const put = await fetch(grant.body.upload_url, { method: "PUT", headers: { "content-type": mimeType }, body: bytes })
  if (!put.ok) throw new Error(`upload failed: ${put.status} ${await put.text()}`)
  const processed = await api.post("/api/v1/knowledge-base/process-document", {
    document_uuid: grant.body.document_uuid,
    s3_key: grant.body.s3_key
  }, credentials)
  if (processed.status !== 200) throw new Error(`process failed: ${processed.status} ${JSON.stringify(processed.body)}`)
  return processed.body as { document_uuid: string; processing_status: string; s3_key?: string } & Record<string, any>
}

/** Polls the document until indexing ends (completed or failed). */
export const untilIndexed = async (api: Client, credentials: Credentials, documentUuid: string) => {
  const deadline = Date.now() + 120_000
  while (Date.now() < deadline) {
    const reply = await api.get(`/api/v1/knowledge-base/documents/${documentUuid}`, credentials)
    if (reply.status !== 200) throw new Error(`get failed: ${reply.status} ${JSON.stringify(reply.body)}`)
    if (reply.body.processing_status === "completed" || reply.body.processing_status === "failed") return reply.body
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
  throw new Error(`document ${documentUuid} still indexing after two minutes`)
}
