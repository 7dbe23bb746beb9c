import { Effect } from "effect"
import * as http from "node:http"
import * as https from "node:https"
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions"
import { serviceVersion } from "../../http/version.ts"
import { LlmFailed } from "../../services/LlmGenerator.ts"
import { EventStreamDecoder, type ServerSentEvent } from "./eventStreamDecoder.ts"

/** How much of a refusal's body is kept for the operator's log. */
const REFUSAL_TEXT_LIMIT = 8 * 1024
/** The most of a whole (unstreamed) JSON answer that is read. */
const WHOLE_ANSWER_LIMIT = 4 * 1024 * 1024

/** A refused request or a broken reply: `failure` for callers, the provider's own words as `message` for the log. */
export class ProviderReplyFailed extends Error {
  readonly failure: LlmFailed
  constructor(failure: LlmFailed, detail: string) {
    super(detail)
    this.failure = failure
  }
}

const broken = (detail: string) =>
  new ProviderReplyFailed(new LlmFailed({ reason: "unreachable", status: null, message: "connection failed or the reply broke off" }), detail)

const refused = (status: number | null, detail: string) =>
  new ProviderReplyFailed(new LlmFailed({ reason: "rejected", status, message: status === null ? "the provider reported an error in its reply" : `HTTP ${status}` }), detail)

/** A whole completion as the one chunk that would have carried all of it. */
const asOneChunk = (completion: ChatCompletion): ChatCompletionChunk => ({
  id: completion.id,
  object: "chat.completion.chunk",
  created: completion.created,
  model: completion.model,
  choices: (completion.choices ?? []).map((choice) => ({
    index: choice.index,
    delta: {
      content: choice.message?.content ?? null,
      tool_calls: (choice.message?.tool_calls ?? []).flatMap((call, index) =>
        call.type === "function" ? [{ index, id: call.id, type: "function" as const, function: call.function }] : []
      )
    },
    finish_reason: choice.finish_reason
  })),
  usage: completion.usage ?? null
})

/** A body read whole, kept up to `limit` characters, handed over once it has ended. */
const wholeBody = (response: http.IncomingMessage, limit: number, onEnd: (text: string) => void) => {
  let text = ""
  response.on("data", (piece: string) => {
    if (text.length < limit) text += piece.slice(0, limit - text.length)
  })
  response.on("end", () => onEnd(text))
}

export interface ChatCompletionsCall {
  readonly baseUrl: string
  readonly apiKey: string | null
  readonly body: unknown
  readonly signal: AbortSignal
}

/**
 * The chunks of one streamed reply, read one at a time: `next` answers the next chunk, or
 * undefined once the provider has sent `[DONE]` or ended the stream. A refusal or a broken reply
 * rejects the pending read with `ProviderReplyFailed`. Failures are held until read, so an
 * abandoned reply never leaves a rejected promise unhandled.
 */
export class ChatCompletionChunks {
  private readonly ready: Array<ChatCompletionChunk> = []
  private done = false
  private failure: ProviderReplyFailed | undefined
  private waiting: { readonly resolve: (chunk: ChatCompletionChunk | undefined) => void; readonly reject: (error: unknown) => void } | undefined

  next(): Promise<ChatCompletionChunk | undefined> {
    if (this.ready.length > 0) return Promise.resolve(this.ready.shift())
    if (this.failure) return Promise.reject(this.failure)
    if (this.done) return Promise.resolve(undefined)
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }))
  }

  accept(event: ServerSentEvent) {
    if (this.done || this.failure) return
    if (event.data === "[DONE]") return this.end()
    if (event.event === "error") return this.fail(refused(null, event.data))
    let chunk: (ChatCompletionChunk & { error?: unknown }) | undefined
    try {
      chunk = JSON.parse(event.data)
    } catch {
      return this.fail(broken(`an event that is not JSON: ${event.data.slice(0, 200)}`))
    }
    if (!chunk || chunk.error) return this.fail(refused(null, event.data))
    this.deliver(chunk)
  }

  /** An endpoint that ignored `stream: true` and answered with the whole completion. */
  acceptWhole(text: string) {
    if (this.done || this.failure) return
    let answer: (ChatCompletion & { error?: unknown }) | undefined
    try {
      answer = JSON.parse(text)
    } catch {
      return this.fail(broken(`an answer that is neither an event stream nor JSON: ${text.slice(0, 200)}`))
    }
    if (!answer || answer.error || !Array.isArray(answer.choices)) return this.fail(refused(null, text.slice(0, REFUSAL_TEXT_LIMIT)))
    this.deliver(asOneChunk(answer))
    this.end()
  }

  private deliver(chunk: ChatCompletionChunk) {
    const waiting = this.waiting
    if (waiting) {
      this.waiting = undefined
      waiting.resolve(chunk)
    } else this.ready.push(chunk)
  }

  end() {
    if (this.done || this.failure) return
    this.done = true
    const waiting = this.waiting
    this.waiting = undefined
    waiting?.resolve(undefined)
  }

  fail(failure: ProviderReplyFailed) {
    if (this.done || this.failure) return
    this.failure = failure
    const waiting = this.waiting
    this.waiting = undefined
    waiting?.reject(failure)
  }
}

/**
 * Streaming chat completions spoken directly over HTTP (`POST {base}/chat/completions` answered by
 * server-sent events), on kept-alive connections that live as long as the scope. The hot path of
 * every chat message and voice turn: the `openai` client's request machinery (async option and
 * header building, request logging, WHATWG fetch and streams) cost about a quarter of a chat
 * message's server CPU time (bench/chatTurnOverhead.ts). The wire format is the client's own
 * types (`ChatCompletionChunk`).
 */
export const makeChatCompletionsStreams = Effect.gen(function* () {
  const agents = yield* Effect.acquireRelease(
    Effect.sync(() => ({ http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) })),
    (agents) =>
      Effect.sync(() => {
        agents.http.destroy()
        agents.https.destroy()
      })
  )
  const userAgent = `talkgraph/${serviceVersion}`

  const send = (url: URL, headers: http.OutgoingHttpHeaders, payload: string, signal: AbortSignal, chunks: ChatCompletionChunks, retried: boolean) => {
    const secure = url.protocol === "https:"
    let answered = false
    const request = (secure ? https : http).request(url, { method: "POST", headers, signal, agent: secure ? agents.https : agents.http }, (response) => {
      answered = true
      response.setEncoding("utf8")
      const status = response.statusCode ?? 0
      const accepted = status >= 200 && status <= 299
      // Closed before its end: the connection dropped or the request was aborted.
      response.on("close", () => chunks.fail(accepted ? broken("the reply broke off") : refused(status, `HTTP ${status}`)))
      if (!accepted) return wholeBody(response, REFUSAL_TEXT_LIMIT, (text) => chunks.fail(refused(status, `HTTP ${status}: ${text}`)))
      // An endpoint that ignored `stream: true`; a body cut off at the limit fails to parse.
      if (/^application\/json/i.test(response.headers["content-type"] ?? "")) return wholeBody(response, WHOLE_ANSWER_LIMIT, (text) => chunks.acceptWhole(text))
      const decoder = new EventStreamDecoder()
      response.on("data", (piece: string) => {
        for (const event of decoder.push(piece)) chunks.accept(event)
      })
      response.on("end", () => {
        for (const event of decoder.end()) chunks.accept(event)
        chunks.end()
      })
    })
    request.on("error", (error: NodeJS.ErrnoException) => {
      // A kept-alive connection the server closed as it was reused: nothing was answered, so
      // sending once more on a fresh connection is safe (Node's documented remedy).
      if (!retried && !answered && request.reusedSocket && error.code === "ECONNRESET" && !signal.aborted) {
        send(url, headers, payload, signal, chunks, true)
      } else chunks.fail(broken(error.message))
    })
    request.end(payload)
  }

  /** Sends the request; its reply is read from the answered chunks. */
  const open = (call: ChatCompletionsCall): ChatCompletionChunks => {
    const chunks = new ChatCompletionChunks()
    const payload = JSON.stringify(call.body)
    const headers: http.OutgoingHttpHeaders = {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(payload),
      accept: "text/event-stream",
      "user-agent": userAgent,
      ...(call.apiKey ? { authorization: `Bearer ${call.apiKey}` } : {})
    }
    send(new URL(`${call.baseUrl.replace(/\/+$/, "")}/chat/completions`), headers, payload, call.signal, chunks, false)
    return chunks
  }

  return { open }
})
