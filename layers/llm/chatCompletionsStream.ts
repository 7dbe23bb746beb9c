import { Effect } from "effect"
import type * as http from "node:http"
import { StringDecoder } from "node:string_decoder"
import type { ChatCompletion, ChatCompletionChunk } from "openai/resources/chat/completions"
import { OutboundHttp } from "../../services/OutboundHttp.ts"
import { endpointUnder } from "../../src/outbound/baseUrls.ts"
import { readReply, REPLY_LIMITS } from "../outbound/replyBody.ts"
import { EventStreamDecoder, type ServerSentEvent } from "./eventStreamDecoder.ts"
import { brokenReply, type ProviderReplyFailed, refusedRequest } from "./providerFailure.ts"

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

interface ChatCompletionsCall {
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
  private waiting: {
    readonly resolve: (chunk: ChatCompletionChunk | undefined) => void
    readonly reject: (error: unknown) => void
  } | undefined

  next(): Promise<ChatCompletionChunk | undefined> {
    if (this.ready.length > 0) return Promise.resolve(this.ready.shift())
    if (this.failure) return Promise.reject(this.failure)
    if (this.done) return Promise.resolve(undefined)
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }))
  }

  accept(event: ServerSentEvent) {
    if (this.done || this.failure) return
    if (event.data === "[DONE]") return this.end()
    if (event.event === "error") return this.fail(refusedRequest(null, event.data))
    let chunk: (ChatCompletionChunk & { error?: unknown }) | undefined
    try {
      chunk = JSON.parse(event.data)
    } catch {
      return this.fail(brokenReply(`an event that is not JSON: ${event.data.slice(0, 200)}`))
    }
    if (!chunk || chunk.error) return this.fail(refusedRequest(null, event.data))
    this.deliver(chunk)
  }

  /** An endpoint that ignored `stream: true` and answered with the whole completion. */
  acceptWhole(text: string) {
    if (this.done || this.failure) return
    let answer: (ChatCompletion & { error?: unknown }) | undefined
    try {
      answer = JSON.parse(text)
    } catch {
      return this.fail(brokenReply(`an answer that is neither an event stream nor JSON: ${text.slice(0, 200)}`))
    }
    if (!answer || answer.error || !Array.isArray(answer.choices)) {
      return this.fail(refusedRequest(null, text.slice(0, REPLY_LIMITS.refusalText)))
    }
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
 * server-sent events), on the outbound client's kept-alive connections. The hot path of every
 * chat message and voice turn: the `openai` client's request machinery (async option and header
 * building, request logging, WHATWG fetch and streams) cost about a quarter of a chat message's
 * server CPU time (bench/chatTurnOverhead.ts). The wire format is the client's own types
 * (`ChatCompletionChunk`).
 */
export const makeChatCompletionsStreams = Effect.gen(function*() {
  const outbound = yield* OutboundHttp

  const read = (response: http.IncomingMessage, chunks: ChatCompletionChunks) => {
    const status = response.statusCode ?? 0
    if (status < 200 || status > 299) {
      return readReply(response, REPLY_LIMITS.refusalText, { truncate: true }).then(
        (text) => chunks.fail(refusedRequest(status, `HTTP ${status}: ${text.toString("utf8")}`)),
        () => chunks.fail(refusedRequest(status, `HTTP ${status}`))
      )
    }
    // An endpoint that ignored `stream: true`.
    if (/^application\/json/i.test(response.headers["content-type"] ?? "")) {
      return readReply(response, REPLY_LIMITS.chatCompletionJson).then(
        (body) => chunks.acceptWhole(body.toString("utf8")),
        (error) => chunks.fail(brokenReply(String(error?.message ?? error)))
      )
    }
    const text = new StringDecoder("utf8")
    const decoder = new EventStreamDecoder(REPLY_LIMITS.chatStreamEvent)
    return readReply(response, REPLY_LIMITS.chatStream, {
      onPiece: (piece) => {
        for (const event of decoder.push(text.write(piece))) chunks.accept(event)
      }
    }).then(
      () => {
        for (const event of decoder.end()) chunks.accept(event)
        chunks.end()
      },
      (error) => chunks.fail(brokenReply(String(error?.message ?? error)))
    )
  }

  /** Sends the request; its reply is read from the answered chunks. */
  const open = (call: ChatCompletionsCall): ChatCompletionChunks => {
    const chunks = new ChatCompletionChunks()
    const url = endpointUnder(call.baseUrl, "/chat/completions")
    if (url === null) {
      chunks.fail(brokenReply(`the base URL ${call.baseUrl} has a query string, a fragment or credentials`))
      return chunks
    }
    const payload = JSON.stringify(call.body)
    outbound.send("model", {
      url,
      method: "POST",
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(payload),
        accept: "text/event-stream",
        ...(call.apiKey ? { authorization: `Bearer ${call.apiKey}` } : {})
      },
      body: payload,
      signal: call.signal,
      resendOnStaleConnection: true
    }).then(
      (response) => read(response, chunks).catch((error) => chunks.fail(brokenReply(String(error?.message ?? error)))),
      (error) => chunks.fail(brokenReply(String(error?.message ?? error)))
    )
    return chunks
  }

  return { open }
})
