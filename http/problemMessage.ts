import type { FieldProblem } from "../src/domain/errors.ts"

/** How much of a rejected value a message may quote back. */
const EXCERPT_CHARS = 32
/** A message longer than this can only be long by quoting input; it is cut. */
const MESSAGE_CHARS = 300

/** Fields holding a credential: their value is never quoted back, however short. */
const SECRET_FIELD = /pass(word|phrase)?|secret|token|api_?key|access_?key|private_?key|credential|signature/i

const ACTUAL = /, actual (.*)$/s

const cut = (text: string, chars: number) => {
  if (text.length <= chars) return text
  const head = text.slice(0, chars)
  // Never end on half a surrogate pair: the reply would carry a lone surrogate.
  return `${/[\uD800-\uDBFF]$/.test(head) ? head.slice(0, -1) : head}…`
}

const excerpt = (formatted: string) => {
  if (formatted.length <= EXCERPT_CHARS) return formatted
  return formatted.startsWith("\"") ? `${cut(formatted, EXCERPT_CHARS)}"` : cut(formatted, EXCERPT_CHARS)
}

const isSecretLocation = (loc: FieldProblem["loc"]) =>
  loc.some((segment) => typeof segment === "string" && SECRET_FIELD.test(segment))

/**
 * A problem's message as the caller may see it. Effect's messages end with the whole rejected
 * value (`Expected a string at most 1024 character(s) long, actual "…"`), which sent a 300 MB
 * field back and an over-long password in clear. The value is quoted only as a short excerpt of
 * a scalar at a named field, and never for a credential field, the body as a whole, or an object
 * or array (which can hold a credential under any name).
 */
export const problemMessage = (loc: FieldProblem["loc"], message: string): string => {
  const actual = ACTUAL.exec(message)
  if (!actual) return cut(message, MESSAGE_CHARS)
  const said = message.slice(0, actual.index)
  const value = actual[1]!
  const quotable = loc.length > 1 && !isSecretLocation(loc) && !/^[[{]/.test(value)
  return cut(quotable ? `${said}, actual ${excerpt(value)}` : said, MESSAGE_CHARS)
}
