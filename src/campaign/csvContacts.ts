import { CsvError } from "csv-parse"
import { Readable } from "node:stream"
import { referencesIn } from "../graph/templateVariables.ts"
import { type CountryCode, toE164 } from "../phone/mod.ts"
import { CsvContactsInvalid, delimitedText, MAX_LINE_CHARS, utf8Text } from "./csvText.ts"
import { type NumberedRecord, NumberingCsvParser } from "./numberingCsvParser.ts"
import { PhoneNumberSet } from "./phoneNumberSet.ts"
import { RowList } from "./rowList.ts"

export { CsvContactsInvalid } from "./csvText.ts"

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
  /** Called once the header row is read and accepted, before any row. */
  readonly onHeader?: ((columns: ReadonlyArray<string>) => void) | undefined
}

export interface CsvContactsSummary {
  readonly accepted: number
  readonly columns: ReadonlyArray<string>
  /** Skipped rows, summarised (campaign `warnings`). */
  readonly warnings: ReadonlyArray<string>
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

/** More columns than any contacts list has: past this the file is refused before anything else is read. */
export const MAX_COLUMNS = 1000

/** A name or value quoted in a message, cut short: messages stay short whatever the file holds. */
const quoted = (text: string) => `"${text.length > 40 ? `${text.slice(0, 40)}…` : text}"`

const listed = (names: ReadonlyArray<string>, shown = 5) =>
  `${names.slice(0, shown).map(quoted).join(", ")}${names.length > shown ? ` and ${names.length - shown} more` : ""}`

interface Header {
  readonly names: ReadonlyArray<string>
  readonly phone: number
  readonly greetingType: number
  readonly greetingText: number
  readonly greetingRecording: number
  /** [index, name] of the columns that become the contact's context. */
  readonly contextColumns: ReadonlyArray<readonly [number, string]>
}

const tooManyColumns = (columns: number) =>
  new CsvContactsInvalid([
    `The header has ${columns.toLocaleString("en-US")} columns; a contacts CSV may have at most ${
      MAX_COLUMNS.toLocaleString("en-US")
    }`
  ])

const readHeader = (fields: ReadonlyArray<string>, requiredColumns: ReadonlyArray<string>): Header => {
  if (fields.length > MAX_COLUMNS) throw tooManyColumns(fields.length)
  const names = fields.map((field) => field.trim())
  const problems: Array<string> = []
  const unnamed = new RowList(5, "Column")
  const repeated: Array<string> = []
  const seen = new Set<string>()
  names.forEach((name, index) => {
    if (name === "") unnamed.add(index + 1)
    else if (seen.has(name.toLowerCase())) repeated.push(name)
    seen.add(name.toLowerCase())
  })
  if (unnamed.count > 0) {
    problems.push(`${unnamed.describe()} of the header ${unnamed.count === 1 ? "has" : "have"} no name`)
  }
  if (repeated.length > 0) {
    problems.push(
      `${repeated.length === 1 ? "Column" : "Columns"} ${listed(repeated)} ${
        repeated.length === 1 ? "appears" : "appear"
      } more than once in the header`
    )
  }
  const indexOf = (column: string) => names.findIndex((name) => name.toLowerCase() === column)
  const phone = indexOf(PHONE)
  if (phone < 0) {
    const found = names.filter((name) => name !== "")
    problems.push(
      `The header has no "${PHONE}" column (found: ${
        found.length > 0 ? listed(found, 10).replaceAll("\"", "") : "none"
      })`
    )
  }
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

/** Distinct kinds of row problem described one by one; rows of any further kind are only counted. */
const PROBLEM_KINDS_SHOWN = 10

/** Per-row problems, each kind listed once with its rows. */
class RowProblems {
  private readonly kinds = new Map<string, RowList>()
  private readonly others = new RowList()

  add(kind: string, row: number) {
    let rows = this.kinds.get(kind)
    if (!rows) {
      if (this.kinds.size >= PROBLEM_KINDS_SHOWN) return this.others.add(row)
      rows = new RowList()
      this.kinds.set(kind, rows)
    }
    rows.add(row)
  }

  get any() {
    return this.kinds.size > 0
  }

  describe(format: (kind: string, rows: RowList) => string) {
    const described = [...this.kinds].map(([kind, rows]) => format(kind, rows))
    return this.others.count > 0 ? [...described, format("other problems of the same kinds", this.others)] : described
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
        problems.add(
          `${GREETING_TEXT} references {{${name.length > 40 ? `${name.slice(0, 40)}…` : name}}}, which is not a column`,
          row
        )
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
      problems.add(`${GREETING_RECORDING} ${quoted(recording)} is not a recording of this organization`, row)
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

/** Fields past the header's columns with something in them (a trailing delimiter leaves only blanks). */
const hasExtraText = (fields: ReadonlyArray<string>, columns: number) => {
  for (let i = columns; i < fields.length; i++) if (fields[i]!.trim() !== "") return true
  return false
}

/**
 * A row's context, one key per column. A column may be named `__proto__`: assigned, that name
 * would set the object's prototype and the value would be lost, so it is defined as its own key.
 */
const contextOf = (fields: ReadonlyArray<string>, columns: ReadonlyArray<readonly [number, string]>) => {
  const context: Record<string, string> = {}
  for (const [index, name] of columns) {
    const value = fields[index]!.trim()
    if (name === "__proto__") {
      Object.defineProperty(context, name, { value, enumerable: true, writable: true, configurable: true })
    } else context[name] = value
  }
  return context
}

const malformed = (error: CsvError) => {
  const near = typeof error.lines === "number" ? ` near row ${error.lines}` : ""
  if (error.code === "CSV_MAX_RECORD_SIZE") {
    return `The CSV has a row longer than ${
      MAX_LINE_CHARS.toLocaleString("en-US")
    } characters${near}; a contacts CSV has one short row per contact`
  }
  return `The CSV is malformed${near}: ${
    error.message.length > 300 ? `${error.message.slice(0, 300)}…` : error.message
  }`
}

/**
 * Reads a contacts CSV as it streams in, yielding batches of contacts. Rows with an unusable
 * phone number (invalid, empty, or already seen) are skipped and summarised in `warnings`.
 * Fields are separated by commas, semicolons or tabs, whichever the header row uses. A row with
 * more fields than the header keeps its contact, the extra fields ignored with a warning.
 * Anything structural (no header, missing columns, short rows, bad greeting overrides) is
 * collected over the whole file and thrown at the end as `CsvContactsInvalid`; once such a
 * problem is found no further batches are yielded, so the caller can discard what it stored.
 */
export async function* readContacts(
  source: AsyncIterable<Uint8Array | string>,
  options: CsvContactsOptions
): AsyncGenerator<ReadonlyArray<Contact>, CsvContactsSummary> {
  const batchSize = options.batchSize ?? 5000
  const { delimiter, columns: headerColumns, text } = await delimitedText(utf8Text(source), PHONE)
  // Refused before the parser splits the header into its million fields.
  if (headerColumns !== undefined && headerColumns > MAX_COLUMNS) throw tooManyColumns(headerColumns)
  const parser = new NumberingCsvParser({
    delimiter,
    relax_column_count: true,
    skip_empty_lines: true,
    bom: true,
    max_record_size: MAX_LINE_CHARS
  })
  const input = Readable.from(text)
  input.on("error", (error) => parser.destroy(error))
  input.pipe(parser)

  let header: Header | undefined
  let columns: ReadonlySet<string> = new Set()
  const problems = new RowProblems()
  const invalid = new RowList()
  const empty = new RowList()
  const duplicate = new RowList()
  const extra = new RowList()
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
          options.onHeader?.(header.names)
          continue
        }
        rows++
        if (record.length < header.names.length) {
          problems.add(`fewer fields than the header's ${header.names.length} columns`, row)
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
        // Spreadsheets leave stray cells right of a table; they are not data of any column.
        if (record.length > header.names.length && hasExtraText(record, header.names.length)) extra.add(row)
        batch.push({
          row,
          phone_number: phone,
          context: contextOf(record, header.contextColumns),
          greeting_override: greeting
        })
        accepted++
        if (batch.length >= batchSize) {
          yield batch
          batch = []
        }
      }
    }
  } catch (error) {
    if (error instanceof CsvError) throw new CsvContactsInvalid([malformed(error)])
    throw error
  } finally {
    input.destroy()
  }

  if (!header) {
    throw new CsvContactsInvalid([
      "The file is empty: a CSV needs a header row with a phone_number column and at least one contact row"
    ])
  }
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
    if (list.count > 0) {
      warnings.push(
        `${list.count} ${list.count === 1 ? "row" : "rows"} skipped: ${why} (${list.describe().toLowerCase()})`
      )
    }
  }
  skipped(empty, "empty phone number")
  skipped(
    invalid,
    `invalid phone number${
      options.defaultRegion ? "" : " (without a default region, numbers must start with + and a country code)"
    }`
  )
  skipped(duplicate, "duplicate phone number")
  if (extra.count > 0) {
    warnings.push(
      `${extra.count} ${
        extra.count === 1 ? "row has" : "rows have"
      } more fields than the header's ${header.names.length} columns; ` +
        `the extra fields were ignored (${extra.describe().toLowerCase()})`
    )
  }
  return { accepted, columns: header.names, warnings }
}
