/**
 * Media types a `.csv` file arrives with. Browsers take a file's type from the operating system:
 * with Excel installed Windows reports `.csv` as `application/vnd.ms-excel`, and a type they cannot
 * tell is `application/octet-stream`; `text/csv` (RFC 7111) is what the upload URL names.
 */
export const CSV_MEDIA_TYPES: ReadonlyArray<string> = [
  "text/csv",
  "application/vnd.ms-excel",
  "application/octet-stream",
  "application/csv",
  "text/x-csv",
  "text/comma-separated-values",
  "text/plain"
]

export const isCsvMediaType = (mediaType: string) => CSV_MEDIA_TYPES.includes(mediaType)

/** Whether an upload URL made for `bound` takes a body sent as `sent` (both bare media types). */
export const acceptsMediaType = (bound: string, sent: string) =>
  bound === sent || (isCsvMediaType(bound) && isCsvMediaType(sent))
