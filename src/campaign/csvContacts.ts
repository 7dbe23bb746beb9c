import { CsvError } from "csv-parse"
import { Readable } from "node:stream"
import { referencesIn } from "../graph/templateVariables.ts"
import { type CountryCode, toE164 } from "../phone/mod.ts"
import { type NumberedRecord, NumberingCsvParser } from "./numberingCsvParser.ts"
import { PhoneNumberSet } from "./phoneNumberSet.ts"
import { RowList } from "./rowList.ts"

/** Per-row replacement of the Start node's greeting (spec "Contacts CSV"). */
export type GreetingOverride =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "audio"; readonly recording_id: string }

export interface Contact {
  /** The row as a spreadsheet numbers it: the header is row 1. */
  readonly row: number
  readonly phone_number: string
  /** Every column but `phone_number` and the greeting override columns, as written. */
  readonly context: Record<string, string>
  readonly greeting_override: GreetingOverride | null
}

export interface CsvContactsOptions {
  readonly defaultRegion: CountryCode | undefined
  /** Variables the workflow uses without a fallback; each must be a column. */
  readonly requiredColumns: ReadonlyArray<string>
  /** The organization's recording ids; when given, an audio greeting override must name one of them. */
  readonly recordingIds?: ReadonlySet<string> | undefined
  readonly batchSize?: number
}

export interface CsvContactsSummary {
  readonly accepted: number
  readonly columns: ReadonlyArray<string>
  /** Skipped rows, summarised (campaign `warnings`). */
  readonly warnings: ReadonlyArray<string>
}

/** The file cannot be used as it is; every problem found, each with its row numbers. */
export class CsvContactsInvalid extends Error {
  readonly problems: ReadonlyArray<string>
  constructor(problems: ReadonlyArray<string>) {
    super(problems.join("; "))
    this.problems = problems
  }
}

const PHONE = "phone_number"
const GREETING_TYPE = "greeting_override_type"
const GREETING_TEXT = "greeting_override_text"
const GREETING_RECORDING = "greeting_override_recording_id"
const SPECIAL = new Set([PHONE, GREETING_TYPE, GREETING_TEXT, GREETING_RECORDING])

/**
 * Values every call's context has without a CSV column (filled in when the call is placed), so a
 * workflow may reference them freely.
 */
export const builtInVariables: ReadonlySet<string> = new Set([
  PHONE,
  "caller_number",
  "called_number",
  "direction",
  "provider",
  "campaign_id",
  "contact_id",
  "run_id",
  "telephony_configuration_id"
])

/**
 * Text is handed on in pieces of at most this many bytes: a longer string would be allocated in
 * V8's large-object space, where each one stays until a full garbage collection, and a million
 * rows' worth of them made the heap swell by hundreds of megabytes.
 */
const TEXT_PIECE_BYTES = 32 * 1024

/**
 * Bytes to text, refusing what is not UTF-8 text: a CSV saved as UTF-16 or Latin-1, or a binary
 * file uploaded by mistake, would otherwise turn into garbled contacts. Each chunk is checked
 * whole before any of it is handed on.
 */
async function* utf8Text(source: AsyncIterable<Uint8Array | string>): AsyncGenerator<string> {
  const decoder = new TextDecoder("utf-8", { fatal: true })
  let offset = 0
  let first = true
  for await (const chunk of source) {
    const bytes = typeof chunk === "string" ? Buffer.from(chunk, "utf8") : chunk
    if (first && bytes.length >= 2 && ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))) {
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
    if (pieces.some((piece) => piece.includes("\u0000"))) {
      throw new CsvContactsInvalid(["The file is binary (it contains NUL bytes), not a CSV text file"])
    }
    offset += bytes.length
    yield* pieces
  }
  try {
    const rest = decoder.decode()
    if (rest !== "") yield rest
  } catch {
    throw new CsvContactsInvalid(["The file is not UTF-8 text (it ends inside a multi-byte character); save the CSV as UTF-8"])
  }
}

interface Header {
  readonly names: ReadonlyArray<string>
  readonly phone: number
  readonly greetingType: number
  readonly greetingText: number
  readonly greetingRecording: number
  /** [index, name] of the columns that become the contact's context. */
  readonly contextColumns: ReadonlyArray<readonly [number, string]>
}

const readHeader = (fields: ReadonlyArray<string>, requiredColumns: ReadonlyArray<string>): Header => {
  const names = fields.map((field) => field.trim())
  const problems: Array<string> = []
  const seen = new Set<string>()
  names.forEach((name, index) => {
    if (name === "") problems.push(`Column ${index + 1} of the header has no name`)
    else if (seen.has(name.toLowerCase())) problems.push(`Column "${name}" appears more than once in the header`)
    seen.add(name.toLowerCase())
  })
  const indexOf = (column: string) => names.findIndex((name) => name.toLowerCase() === column)
  const phone = indexOf(PHONE)
  if (phone < 0) problems.push(`The header has no "${PHONE}" column (found: ${names.filter((n) => n !== "").join(", ") || "none"})`)
  const present = new Set(names)
  const missing = requiredColumns.filter((column) => !builtInVariables.has(column) && !present.has(column))
  if (missing.length > 0) {
    problems.push(
      `The workflow uses ${missing.map((name) => `{{${name}}}`).join(", ")} but the CSV has no ${
        missing.length === 1 ? "column" : "columns"
      } of that name`
    )
  }
  if (problems.length > 0) throw new CsvContactsInvalid(problems)
  return {
    names,
    phone,
    greetingType: indexOf(GREETING_TYPE),
    greetingText: indexOf(GREETING_TEXT),
    greetingRecording: indexOf(GREETING_RECORDING),
    contextColumns: names.flatMap((name, index) => (SPECIAL.has(name.toLowerCase()) ? [] : [[index, name] as const]))
  }
}

/** Per-row problems, each kind listed once with its rows. */
class RowProblems {
  private readonly kinds = new Map<string, RowList>()

  add(kind: string, row: number) {
    let rows = this.kinds.get(kind)
    if (!rows) {
      rows = new RowList()
      this.kinds.set(kind, rows)
    }
    rows.add(row)
  }

  get any() {
    return this.kinds.size > 0
  }

  describe(format: (kind: string, rows: RowList) => string) {
    return [...this.kinds].map(([kind, rows]) => format(kind, rows))
  }
}

const field = (fields: ReadonlyArray<string>, index: number) => (index < 0 ? "" : (fields[index] ?? "").trim())

const greetingOf = (
  fields: ReadonlyArray<string>,
  header: Header,
  columns: ReadonlySet<string>,
  row: number,
  problems: RowProblems,
  recordingIds?: ReadonlySet<string>
): GreetingOverride | null => {
  const type = field(fields, header.greetingType).toLowerCase()
  const text = field(fields, header.greetingText)
  const recording = field(fields, header.greetingRecording)
  if (type === "" && text === "" && recording === "") return null
  if (type === "text") {
    if (text === "") {
      problems.add(`${GREETING_TEXT} is empty while ${GREETING_TYPE} is "text"`, row)
      return null
    }
    for (const reference of referencesIn(text)) {
      const name = reference.name.split(".")[0]!
      if (reference.fallback === undefined && !columns.has(name) && !builtInVariables.has(name)) {
        problems.add(`${GREETING_TEXT} references {{${name}}}, which is not a column`, row)
      }
    }
    return { type: "text", text }
  }
  if (type === "audio") {
    if (recording === "") {
      problems.add(`${GREETING_RECORDING} is empty while ${GREETING_TYPE} is "audio"`, row)
      return null
    }
    if (recordingIds && !recordingIds.has(recording)) {
      problems.add(`${GREETING_RECORDING} "${recording}" is not a recording of this organization`, row)
      return null
    }
    return { type: "audio", recording_id: recording }
  }
  problems.add(
    type === ""
      ? `${GREETING_TYPE} is empty while another greeting override column is filled (use "text" or "audio")`
      : `${GREETING_TYPE} must be "text" or "audio"`,
    row
  )
  return null
}

const isBlank = (fields: ReadonlyArray<string>) => fields.every((value) => value.trim() === "")

/**
 * Reads a contacts CSV as it streams in, yielding batches of contacts. Rows with an unusable
 * phone number (invalid, empty, or already seen) are skipped and summarised in `warnings`.
 * Anything structural (no header, missing columns, malformed rows, bad greeting overrides) is
 * collected over the whole file and thrown at the end as `CsvContactsInvalid`; once such a
 * problem is found no further batches are yielded, so the caller can discard what it stored.
 */
export async function* readContacts(
  source: AsyncIterable<Uint8Array | string>,
  options: CsvContactsOptions
): AsyncGenerator<ReadonlyArray<Contact>, CsvContactsSummary> {
  const batchSize = options.batchSize ?? 5000
  const parser = new NumberingCsvParser({ relax_column_count: true, skip_empty_lines: true, bom: true })
  const input = Readable.from(utf8Text(source))
  input.on("error", (error) => parser.destroy(error))
  input.pipe(parser)

  let header: Header | undefined
  let columns: ReadonlySet<string> = new Set()
  const problems = new RowProblems()
  const invalid = new RowList()
  const empty = new RowList()
  const duplicate = new RowList()
  const seen = new PhoneNumberSet()
  let rows = 0
  let accepted = 0
  let batch: Array<Contact> = []

  try {
    for await (const records of parser as AsyncIterable<ReadonlyArray<NumberedRecord>>) {
      for (const { record, line: row } of records) {
        if (isBlank(record)) continue
        if (!header) {
          header = readHeader(record, options.requiredColumns)
          columns = new Set(header.names)
          continue
        }
        rows++
        if (record.length !== header.names.length) {
          problems.add(`${record.length < header.names.length ? "fewer" : "more"} fields than the header's ${header.names.length} columns`, row)
          continue
        }
        const greeting = greetingOf(record, header, columns, row, problems, options.recordingIds)
        const raw = field(record, header.phone)
        if (raw === "") {
          empty.add(row)
          continue
        }
        const phone = toE164(raw, options.defaultRegion)
        if (phone === undefined) {
          invalid.add(row)
          continue
        }
        if (!seen.add(Number(phone.slice(1)))) {
          duplicate.add(row)
          continue
        }
        if (problems.any) continue
        const context: Record<string, string> = {}
        for (const [index, name] of header.contextColumns) context[name] = record[index]!.trim()
        batch.push({ row, phone_number: phone, context, greeting_override: greeting })
        accepted++
        if (batch.length >= batchSize) {
          yield batch
          batch = []
        }
      }
    }
  } catch (error) {
    if (error instanceof CsvError) {
      const line = typeof error.lines === "number" ? ` near row ${error.lines}` : ""
      throw new CsvContactsInvalid([`The CSV is malformed${line}: ${error.message}`])
    }
    throw error
  } finally {
    input.destroy()
  }

  if (!header) throw new CsvContactsInvalid(["The file is empty: a CSV needs a header row with a phone_number column and at least one contact row"])
  if (problems.any) {
    throw new CsvContactsInvalid(problems.describe((kind, list) => `${list.describe()}: ${kind}`))
  }
  if (rows === 0) throw new CsvContactsInvalid(["The CSV has a header but no contact rows"])
  if (accepted === 0) {
    throw new CsvContactsInvalid([
      `No row has a usable phone number (${rows} ${rows === 1 ? "row" : "rows"} read; numbers must be valid, ` +
        `in E.164 form such as +14155550123 unless a default region is set)`
    ])
  }
  if (batch.length > 0) yield batch
  const warnings: Array<string> = []
  const skipped = (list: RowList, why: string) => {
    if (list.count > 0) warnings.push(`${list.count} ${list.count === 1 ? "row" : "rows"} skipped: ${why} (${list.describe().toLowerCase()})`)
  }
  skipped(empty, "empty phone number")
  skipped(invalid, `invalid phone number${options.defaultRegion ? "" : " (without a default region, numbers must start with + and a country code)"}`)
  skipped(duplicate, "duplicate phone number")
  return { accepted, columns: header.names, warnings }
}
