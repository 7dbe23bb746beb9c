/** RFC 6901: the value at `pointer` in `document`, or undefined when there is none. */
export const atPointer = (document: unknown, pointer: string): unknown => {
  if (pointer === "") return document
  let value: unknown = document
  for (const raw of pointer.slice(1).split("/")) {
    const token = raw.replace(/~1/g, "/").replace(/~0/g, "~")
    if (Array.isArray(value)) {
      if (!/^(0|[1-9][0-9]*)$/.test(token)) return undefined
      value = value[Number(token)]
    } else if (value !== null && typeof value === "object" && Object.hasOwn(value, token)) {
      value = (value as Record<string, unknown>)[token]
    } else return undefined
  }
  return value
}

/** What the model reads of a result: at most `limit` characters, with a note saying how much was left out. */
export const truncatedForModel = (
  text: string,
  limit: number
): { readonly text: string; readonly truncated: boolean } =>
  text.length <= limit
    ? { text, truncated: false }
    : {
      text: `${
        text.slice(0, limit)
      }\n[truncated: the answer had ${text.length} characters; only the first ${limit} are shown]`,
      truncated: true
    }

/**
 * The part of an HTTP answer the model gets: with a pointer, that part of the JSON (a note when it
 * is missing); otherwise the whole body, re-serialized when it is JSON so it reads compactly.
 */
export const answerForModel = (
  body: string,
  contentType: string,
  pointer: string | null | undefined,
  cut: boolean
): string => {
  let parsed: unknown = undefined
  const looksJson = /json/i.test(contentType) || /^\s*[[{]/.test(body)
  if (looksJson && !cut) {
    try {
      parsed = JSON.parse(body)
    } catch {
      parsed = undefined
    }
  }
  if (pointer) {
    if (parsed === undefined) return cut ? `[the answer was too large to read ${pointer} from]` : body
    const part = atPointer(parsed, pointer)
    return part === undefined
      ? `[the answer has nothing at ${pointer}]`
      : typeof part === "string"
      ? part
      : JSON.stringify(part)
  }
  return parsed === undefined ? body : JSON.stringify(parsed)
}
