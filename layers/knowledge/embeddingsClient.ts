import type { EmbeddingsConnection } from "../../services/ModelSettings.ts"
import type { OutboundHttpShape } from "../../services/OutboundHttp.ts"
import { endpointUnder } from "../../src/outbound/baseUrls.ts"
import { OPENAI_API } from "../llm/openaiApi.ts"
import { readReply } from "../outbound/replyBody.ts"

/** The embeddings endpoint failed; `message` is for the server log and says which endpoint and how. */
export class EmbeddingsFailed extends Error {}

/** Inputs per request: OpenAI accepts up to 2048; fewer keeps each reply small and a slow batch short. */
export const EMBEDDING_BATCH = 64
/** A batch of 64 embeddings of 3072 floats as JSON text stays well under this. */
const REPLY_LIMIT = 32 * 1024 * 1024
const TIMEOUT_MS = 30_000

interface EmbeddingsReply {
  readonly data?: ReadonlyArray<{ readonly index?: number; readonly embedding?: ReadonlyArray<number> }>
}

/**
 * `POST {base}/embeddings` (OpenAI's shape, which every compatible server speaks) for one batch of
 * texts, through the outbound policy as every model request; answers one vector per text, in order.
 */
export const embedTexts = async (
  outbound: OutboundHttpShape,
  connection: EmbeddingsConnection,
  texts: ReadonlyArray<string>
): Promise<Array<Array<number>>> => {
  const base = connection.baseUrl ?? OPENAI_API
  const url = endpointUnder(base, "/embeddings")
  if (url === null) throw new EmbeddingsFailed(`the embeddings base URL ${base} is not usable`)
  const payload = JSON.stringify({ model: connection.model, input: texts, encoding_format: "float" })
  const response = await outbound.send("model", {
    url,
    method: "POST",
    headers: {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload),
      accept: "application/json",
      ...(connection.apiKey ? { authorization: `Bearer ${connection.apiKey}` } : {})
    },
    body: payload,
    signal: AbortSignal.timeout(TIMEOUT_MS),
    resendOnStaleConnection: true
  })
  const status = response.statusCode ?? 0
  if (status < 200 || status > 299) {
    const text = await readReply(response, 8 * 1024, { truncate: true }).catch(() => Buffer.alloc(0))
    throw new EmbeddingsFailed(`${url.host} answered HTTP ${status}: ${text.toString("utf8").slice(0, 500)}`)
  }
  let reply: EmbeddingsReply
  try {
    reply = JSON.parse((await readReply(response, REPLY_LIMIT)).toString("utf8"))
  } catch {
    throw new EmbeddingsFailed(`${url.host} answered something that is not JSON`)
  }
  const vectors: Array<Array<number> | undefined> = new Array(texts.length)
  for (const [position, item] of (reply.data ?? []).entries()) {
    const index = item.index ?? position
    if (Array.isArray(item.embedding) && index >= 0 && index < texts.length) vectors[index] = [...item.embedding]
  }
  if (vectors.some((vector) => vector === undefined || vector.length === 0)) {
    throw new EmbeddingsFailed(`${url.host} did not answer one embedding per input`)
  }
  return vectors as Array<Array<number>>
}
