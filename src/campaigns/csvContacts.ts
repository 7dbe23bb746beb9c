import { CsvError } from "csv-parse"
import { Readable } from "node:stream"
import { type CountryCode, toE164 } from "../phone/mod.ts"
import { field, type Header, MAX_COLUMNS, PHONE, readHeader, tooManyColumns } from "./contactsHeader.ts"
import { CsvContactsInvalid, delimitedText, MAX_LINE_CHARS, utf8Text } from "./csvText.ts"
import { greetingOf, type GreetingOverride } from "./greetingOverride.ts"
import { type NumberedRecord, NumberingCsvParser } from "./numberingCsvParser.ts"
import { RowList } from "./rowList.ts"
import { RowProblems } from "./rowProblems.ts"

export { CsvContactsInvalid } from "./csvText.ts"

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

/**
 * What reading a file found. Rows repeating an earlier row's number are yielded like any other:
 * finding them takes every number seen so far, which grows with the file, so the store does it
 * (a unique index, see `layers/campaigns/contactIngest.ts`) and `contactsSummary` adds them.
 */
export interface CsvContactsRead {
  /** Contacts yielded, repeated numbers included. */
  readonly read: number
  readonly columns: ReadonlyArray<string>
  readonly empty: RowList
  readonly invalid: RowList
  readonly extra: RowList
  readonly defaultRegion: CountryCode | undefined
}

/** The import's summary once the store has said which rows repeated a number (kept: the first). */
export const contactsSummary = (read: CsvContactsRead, duplicate: RowList): CsvContactsSummary => {
  const warnings: Array<string> = []
  const skipped = (list: RowList, why: string) => {
    if (list.count > 0) {
      warnings.push(
        `${list.count} ${list.count === 1 ? "row" : "rows"} skipped: ${why} (${list.describe().toLowerCase()})`
      )
    }
  }
  skipped(read.empty, "empty phone number")
  skipped(
    read.invalid,
    `invalid phone number${
      read.defaultRegion ? "" : " (without a default region, numbers must start with + and a country code)"
    }`
  )
  skipped(duplicate, "duplicate phone number")
  if (read.extra.count > 0) {
    warnings.push(
      `${read.extra.count} ${
        read.extra.count === 1 ? "row has" : "rows have"
      } more fields than the header's ${read.columns.length} columns; ` +
        `the extra fields were ignored (${read.extra.describe().toLowerCase()})`
    )
  }
  return { accepted: read.read - duplicate.count, columns: read.columns, warnings }
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
 * phone number (invalid or empty) are skipped and listed for the summary; a number already seen is
 * the store's to skip (see `CsvContactsRead`). Memory stays the same whatever the file's length.
 * Fields are separated by commas, semicolons or tabs, whichever the header row uses. A row with
 * more fields than the header keeps its contact, the extra fields ignored with a warning.
 * Anything structural (no header, missing columns, short rows, bad greeting overrides) is
 * collected over the whole file and thrown at the end as `CsvContactsInvalid`; once such a
 * problem is found no further batches are yielded, so the caller can discard what it stored.
 */
export async function* readContacts(
  source: AsyncIterable<Uint8Array | string>,
  options: CsvContactsOptions
): AsyncGenerator<ReadonlyArray<Contact>, CsvContactsRead> {
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
  const extra = new RowList()
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
  return { read: accepted, columns: header.names, empty, invalid, extra, defaultRegion: options.defaultRegion }
}
