import { CsvContactsInvalid } from "./csvText.ts"
import { RowList } from "./rowList.ts"

// The contacts CSV's header: the columns with a meaning of their own, and the checks a header must pass.

export const PHONE = "phone_number"
export const GREETING_TYPE = "greeting_override_type"
export const GREETING_TEXT = "greeting_override_text"
export const GREETING_RECORDING = "greeting_override_recording_id"
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
export const quoted = (text: string) => `"${text.length > 40 ? `${text.slice(0, 40)}…` : text}"`

const listed = (names: ReadonlyArray<string>, shown = 5) =>
  `${names.slice(0, shown).map(quoted).join(", ")}${names.length > shown ? ` and ${names.length - shown} more` : ""}`

export interface Header {
  readonly names: ReadonlyArray<string>
  readonly phone: number
  readonly greetingType: number
  readonly greetingText: number
  readonly greetingRecording: number
  /** [index, name] of the columns that become the contact's context. */
  readonly contextColumns: ReadonlyArray<readonly [number, string]>
}

export const tooManyColumns = (columns: number) =>
  new CsvContactsInvalid([
    `The header has ${columns.toLocaleString("en-US")} columns; a contacts CSV may have at most ${
      MAX_COLUMNS.toLocaleString("en-US")
    }`
  ])

export const readHeader = (fields: ReadonlyArray<string>, requiredColumns: ReadonlyArray<string>): Header => {
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

/** A row's trimmed value in a column; empty where the header has no such column. */
export const field = (fields: ReadonlyArray<string>, index: number) => (index < 0 ? "" : (fields[index] ?? "").trim())
