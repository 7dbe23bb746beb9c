/**
 * Spreadsheets run a cell starting with one of these as a formula (CSV injection, OWASP); such
 * text is prefixed with a quote so it is shown, never evaluated. Our own numbers are not text
 * and are written as they are.
 */
const FORMULA_START = /^[=+\-@\t\r]/

const NEEDS_QUOTES = /[",\r\n]/

export type CsvCell = string | number | null | undefined

export const csvCell = (value: CsvCell): string => {
  if (value === null || value === undefined) return ""
  if (typeof value === "number") return String(value)
  const text = FORMULA_START.test(value) ? `'${value}` : value
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll("\"", "\"\"")}"` : text
}

/** One CSV record, CRLF-terminated as RFC 4180 says. */
export const csvLine = (cells: ReadonlyArray<CsvCell>): string => `${cells.map(csvCell).join(",")}\r\n`
