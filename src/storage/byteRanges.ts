/**
 * A `Range` request header against a representation of `size` bytes (RFC 9110 §14.2). One range
 * is served; a header asking for several, or one that does not parse, is ignored and the whole
 * representation is sent, as §14.2 allows a server to do.
 */
type ByteRangeAnswer =
  | { readonly _tag: "Whole" }
  | { readonly _tag: "Partial"; readonly start: number; readonly end: number }
  | { readonly _tag: "Unsatisfiable" }

const WHOLE: ByteRangeAnswer = { _tag: "Whole" }
const UNSATISFIABLE: ByteRangeAnswer = { _tag: "Unsatisfiable" }

const SPEC = /^bytes=\s*(\d*)\s*-\s*(\d*)\s*$/i

export const byteRangeOf = (header: string | undefined, size: number): ByteRangeAnswer => {
  if (header === undefined) return WHOLE
  const match = SPEC.exec(header.trim())
  if (!match) return WHOLE
  const [, first, last] = match as unknown as [string, string, string]
  if (first === "" && last === "") return WHOLE
  if (first === "") {
    // A suffix range: the last N bytes (§14.1.2); asking for none of them cannot be satisfied.
    const suffix = Number(last)
    if (suffix === 0 || size === 0) return UNSATISFIABLE
    return { _tag: "Partial", start: Math.max(0, size - suffix), end: size - 1 }
  }
  const start = Number(first)
  const end = last === "" ? Number.MAX_SAFE_INTEGER : Number(last)
  if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end < start) return WHOLE
  if (start >= size) return UNSATISFIABLE
  return { _tag: "Partial", start, end: Math.min(end, size - 1) }
}

/** `Content-Range` of a partial answer. */
export const contentRange = (range: { readonly start: number; readonly end: number }, size: number) =>
  `bytes ${range.start}-${range.end}/${size}`

/** `Content-Range` of a 416: what there is to ask for. */
export const unsatisfiedRange = (size: number) => `bytes */${size}`
