import type * as http from "node:http"

/** Dimensions of the stand-in's embeddings. */
export const HASHED_DIMENSIONS = 256

const STOP_WORDS = new Set([
  "a",
  "an",
  "the",
  "and",
  "or",
  "of",
  "to",
  "in",
  "on",
  "for",
  "is",
  "are",
  "was",
  "be",
  "do",
  "does",
  "what",
  "which",
  "who",
  "how",
  "when",
  "your",
  "you",
  "we",
  "our",
  "it",
  "its",
  "at",
  "by",
  "with",
  "this",
  "that",
  "i"
])

/** FNV-1a, so a word lands in the same dimension in every process. */
const hash = (text: string) => {
  let value = 0x811c9dc5
  for (let i = 0; i < text.length; i++) {
    value ^= text.charCodeAt(i)
    value = Math.imul(value, 0x01000193) >>> 0
  }
  return value
}

/**
 * A deterministic embedding with real meaning for retrieval: a hashed bag of words (lowercased,
 * stop words dropped, a plural's s cut), each word adding ±1 in a dimension chosen by its hash,
 * normalised to unit length. Texts sharing words point the same way; the cosine of their vectors
 * is what OpenAI's embeddings are compared by.
 */
export const hashedEmbedding = (text: string, dimensions: number = HASHED_DIMENSIONS): Array<number> => {
  const vector = new Array<number>(dimensions).fill(0)
  for (const raw of text.toLowerCase().match(/\p{L}[\p{L}\p{N}]*/gu) ?? []) {
    if (STOP_WORDS.has(raw)) continue
    const word = raw.length > 3 && raw.endsWith("s") ? raw.slice(0, -1) : raw
    const h = hash(word)
    vector[h % dimensions]! += (h & 0x100) === 0 ? 1 : -1
  }
  const norm = Math.sqrt(vector.reduce((sum, x) => sum + x * x, 0))
  return norm === 0 ? vector : vector.map((x) => x / norm)
}

const refuse = (response: http.ServerResponse, status: number, message: string) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify({ error: { message, type: "invalid_request_error" } }))
}

/**
 * `POST /v1/embeddings` as OpenAI answers it, with its restrictions on the input. A model named
 * `…-<n>d` answers with n dimensions (as OpenAI's models differ in size), others with 256.
 */
export const answerEmbeddings = (body: any, response: http.ServerResponse) => {
  if (typeof body?.model !== "string" || body.model === "") return refuse(response, 400, "you must provide a model")
  const inputs: unknown = typeof body.input === "string" ? [body.input] : body.input
  if (!Array.isArray(inputs) || inputs.length === 0 || inputs.length > 2048) {
    return refuse(response, 400, "input must be a string or an array of 1 to 2048 strings")
  }
  if (inputs.some((input) => typeof input !== "string" || input === "")) {
    return refuse(response, 400, "every input must be a non-empty string")
  }
  response.writeHead(200, { "content-type": "application/json" })
  response.end(JSON.stringify({
    object: "list",
    model: body.model,
    data: (inputs as Array<string>).map((input, index) => ({
      object: "embedding",
      index,
      embedding: hashedEmbedding(input, Number(/-(\d+)d$/.exec(body.model)?.[1] ?? HASHED_DIMENSIONS))
    })),
    usage: { prompt_tokens: 0, total_tokens: 0 }
  }))
}
