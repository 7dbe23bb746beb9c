/** RFC 4180 quoting: a field with a comma, quote or line break is quoted, its quotes doubled. */
export const csvField = (value: unknown): string => {
  if (value === null || value === undefined) return ""
  const text = value instanceof Date ? value.toISOString() : typeof value === "string" ? value : String(value)
  // A leading =, +, - or @ would run as a formula when the report is opened in a spreadsheet.
  const safe = /^[=+\-@\t\r]/.test(text) && !/^[+-]?\d/.test(text) ? `'${text}` : text
  return /[",\r\n]/.test(safe) ? `"${safe.replaceAll("\"", "\"\"")}"` : safe
}

export const csvLine = (values: ReadonlyArray<unknown>) => `${values.map(csvField).join(",")}\r\n`
