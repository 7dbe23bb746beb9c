/** The first rows of a CSV file, read in the browser before it is uploaded. */
export interface CsvPreview {
  readonly columns: ReadonlyArray<string>
  readonly rows: ReadonlyArray<ReadonlyArray<string>>
}

/** Enough of the file for a header and a few rows; a large file is never read whole. */
const PREVIEW_BYTES = 64 * 1024

/** RFC 4180 fields: quoted fields may hold commas, newlines and doubled quotes. */
const parseRecords = (text: string, limit: number): Array<Array<string>> => {
  const records: Array<Array<string>> = []
  let record: Array<string> = []
  let field = ""
  let quoted = false
  for (let index = 0; index < text.length && records.length < limit; index++) {
    const char = text[index]!
    if (quoted) {
      if (char === "\"" && text[index + 1] === "\"") {
        field += "\""
        index++
      } else if (char === "\"") quoted = false
      else field += char
    } else if (char === "\"") quoted = true
    else if (char === ",") {
      record.push(field)
      field = ""
    } else if (char === "\n" || char === "\r") {
      if (char === "\r" && text[index + 1] === "\n") index++
      record.push(field)
      if (record.some((cell) => cell !== "")) records.push(record)
      record = []
      field = ""
    } else field += char
  }
  // The last line is whole only when the file ended within what was read.
  if (records.length < limit && (field !== "" || record.length > 0)) records.push([...record, field])
  return records
}

export const previewCsv = async (file: File, rows = 5): Promise<CsvPreview> => {
  const whole = file.size <= PREVIEW_BYTES
  const text = (await file.slice(0, PREVIEW_BYTES).text()).replace(/^\uFEFF/, "")
  // A cut-off last line would show half a row.
  const usable = whole ? text : text.slice(0, Math.max(0, text.lastIndexOf("\n")))
  const [header = [], ...body] = parseRecords(usable, rows + 1)
  return { columns: header.map((column) => column.trim()), rows: body }
}
