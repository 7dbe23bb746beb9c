/** COPY's text format: a backslash escapes, tab and newline end a field or row. */
const copyText = (value: string) =>
  value.replaceAll("\\", "\\\\").replaceAll("\t", "\\t").replaceAll("\n", "\\n").replaceAll("\r", "\\r")

export interface DoNotCallRow {
  readonly phone_number: string
  readonly reason: string | null
}

/** The `do_not_call_numbers` columns a COPY fills, in the order `doNotCallCopyRows` writes them. */
export const doNotCallCopyColumns = ["organization_id", "phone_number", "reason", "source"] as const

/** Rows for `COPY … FROM STDIN` (text format, `\N` for NULL), one organization's, from a CSV import. */
export const doNotCallCopyRows = (organizationId: number, rows: ReadonlyArray<DoNotCallRow>): Buffer =>
  Buffer.from(
    rows.map((row) =>
      `${organizationId}\t${row.phone_number}\t${row.reason === null ? "\\N" : copyText(row.reason)}\tcsv_import\n`
    ).join("")
  )
