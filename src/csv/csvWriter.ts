/**
 * The one way talkgraph writes CSV: every export (campaign report, usage runs, anything added
 * later) builds its lines here, so there is one cell policy to review.
 *
 * Spreadsheets run a cell that starts with `=`, `+`, `-` or `@` as a formula (CSV injection,
 * OWASP "CSV Injection"), tab and carriage return included since some strip them first; Excel in
 * East Asian locales also takes their full-width forms, and leading spaces do not stop LibreOffice.
 * Such text gets a `'` in front, so it is shown, never evaluated. No text is exempt, not even text
 * that looks like a number (`-2+3+cmd|' /C calc'!A0` starts like one): phone numbers therefore come
 * out as `'+14155550123`. Values we hold as numbers are not text and are written as they are.
 */
const FORMULA_START = /^[\s\u3000]*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20]|^[\t\r]/

const NEEDS_QUOTES = /[",\r\n]/

type CsvCell = string | number | Date | null | undefined

export const csvCell = (value: CsvCell): string => {
  if (value === null || value === undefined) return ""
  if (typeof value === "number") return String(value)
  const text = value instanceof Date ? value.toISOString() : value
  const safe = FORMULA_START.test(text) ? `'${text}` : text
  return NEEDS_QUOTES.test(safe) ? `"${safe.replaceAll("\"", "\"\"")}"` : safe
}

/** One CSV record, CRLF-terminated as RFC 4180 says. */
export const csvLine = (cells: ReadonlyArray<CsvCell>): string => `${cells.map(csvCell).join(",")}\r\n`
