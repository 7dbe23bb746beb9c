/**
 * A scripted OpenAI-compatible chat completions server on 127.0.0.1 (random port), for tests of
 * anything that talks to an organization's LLM (the `openai` client, or the chat stream's own
 * HTTP client).
 *
 * Point the product at `llm.baseUrl` (`http://127.0.0.1:PORT/v1`, the `base_url` of the model
 * configuration), queue one reply per expected request, then assert on `llm.requests`:
 *
 *   const llm = await startScriptedLlm()
 *   llm.enqueue(reply.json({ name: "Agent" }), reply.error(503))
 *   …
 *   expect(llm.requests[0].body.response_format.type).toBe("json_schema")
 *   expect(llm.requests[1].toolNames).toEqual(["transfer_to_billing"])
 *   await llm.close()
 *
 * `POST /v1/chat/completions` answers each request with the next queued reply, non-streaming or
 * streaming (`stream: true` → SSE `data: {chunk}` lines with `delta.content` tokens or
 * `delta.tool_calls` fragments, a final chunk carrying `finish_reason`, a usage chunk when
 * `stream_options.include_usage` is set, then `data: [DONE]`). With nothing queued it answers 500
 * with a message saying so, so a test that sends one request too many fails loudly.
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { answerEmbeddings } from "./hashedEmbeddings.ts"

interface ScriptedUsage {
  readonly prompt_tokens: number
  readonly completion_tokens: number
  readonly total_tokens: number
}

interface ScriptedToolCall {
  readonly name: string
  /** An object is sent JSON-encoded; a string is sent as is (e.g. to test malformed arguments). */
  readonly arguments: unknown
  readonly id?: string
}

export type ScriptedReply =
  | {
    readonly kind: "content"
    readonly content: string
    readonly usage?: Partial<ScriptedUsage>
    readonly chunkDelayMs?: number
  }
  | {
    readonly kind: "toolCalls"
    readonly calls: ReadonlyArray<ScriptedToolCall>
    readonly content?: string
    readonly usage?: Partial<ScriptedUsage>
    readonly chunkDelayMs?: number
  }
  | { readonly kind: "error"; readonly status: number; readonly message: string }
  /** Streams `content` token by token, then drops the connection without finishing (a provider failing mid-stream). */
  | { readonly kind: "breakOff"; readonly content: string }
  /** Streams `content` token by token, then an error event in the stream (how OpenAI reports a failure mid-reply). */
  | { readonly kind: "errorInStream"; readonly content: string; readonly message: string }
  /** Waits `ms` before answering with `then`; without `then` it never answers (the client must time out). */
  | { readonly kind: "delay"; readonly ms: number; readonly then?: ScriptedReply }

/** Constructors for queued replies. */
export const reply = {
  content: (
    content: string,
    options: { usage?: Partial<ScriptedUsage>; chunkDelayMs?: number } = {}
  ): ScriptedReply => ({ kind: "content", content, ...options }),
  /** Content that is the JSON encoding of `value` (what a structured-output request expects). */
  json: (value: unknown, options: { usage?: Partial<ScriptedUsage> } = {}): ScriptedReply => ({
    kind: "content",
    content: JSON.stringify(value),
    ...options
  }),
  toolCalls: (
    calls: ReadonlyArray<ScriptedToolCall>,
    options: { content?: string; usage?: Partial<ScriptedUsage>; chunkDelayMs?: number } = {}
  ): ScriptedReply => ({ kind: "toolCalls", calls, ...options }),
  /** An HTTP error with an OpenAI-style body; the default message is text no caller should ever see. */
  error: (status: number, message = "scripted upstream failure: internal-detail-7f3a"): ScriptedReply => ({
    kind: "error",
    status,
    message
  }),
  delay: (ms: number, then?: ScriptedReply): ScriptedReply => ({ kind: "delay", ms, ...(then ? { then } : {}) }),
  hang: (): ScriptedReply => ({ kind: "delay", ms: Number.POSITIVE_INFINITY }),
  breakOff: (content: string): ScriptedReply => ({ kind: "breakOff", content }),
  errorInStream: (content: string, message = "scripted upstream failure: internal-detail-7f3a"): ScriptedReply => ({
    kind: "errorInStream",
    content,
    message
  })
}

interface RecordedRequest {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  /** The parsed JSON body (model, messages, tools, response_format, stream, …). */
  readonly body: any
  /** Names of the function tools offered, in order. */
  readonly toolNames: ReadonlyArray<string>
  readonly stream: boolean
  readonly receivedAt: number
  /** Whether the connection closed before the whole reply was sent: the client aborted (or a `breakOff` reply). */
  readonly abandoned: () => boolean
}

export interface ScriptedLlm {
  /** The `base_url` to configure: `http://127.0.0.1:PORT/v1`. */
  readonly baseUrl: string
  readonly requests: Array<RecordedRequest>
  /** `POST /v1/embeddings` requests (answered with `hashedEmbedding`s): model and number of inputs. */
  readonly embeddingRequests: Array<{ readonly model: unknown; readonly inputs: unknown }>
  readonly enqueue: (...replies: ReadonlyArray<ScriptedReply>) => void
  /** Replies still queued (a test can assert every scripted reply was used). */
  readonly pending: () => number
  /** Forgets queued replies and recorded requests. */
  readonly reset: () => void
  readonly close: () => Promise<void>
}

/** A rough count so usage figures are plausible: about one token per word or punctuation mark. */
const roughTokens = (text: string) => (text.match(/\w+|[^\s\w]/g) ?? []).length

const usageFor = (request: any, completionText: string, override: Partial<ScriptedUsage> = {}): ScriptedUsage => {
  const prompt_tokens = override.prompt_tokens ??
    roughTokens(JSON.stringify(request.messages ?? []) + JSON.stringify(request.tools ?? []))
  const completion_tokens = override.completion_tokens ?? roughTokens(completionText)
  return { prompt_tokens, completion_tokens, total_tokens: override.total_tokens ?? prompt_tokens + completion_tokens }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const toolCallsOf = (calls: ReadonlyArray<ScriptedToolCall>) =>
  calls.map((call, index) => ({
    id: call.id ?? `call_${index + 1}`,
    type: "function" as const,
    function: {
      name: call.name,
      arguments: typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments)
    }
  }))

/** Splits text into stream tokens that keep their leading spaces ("Hello", " there", "!"). */
const tokensOf = (text: string) => text.match(/\s*\S+/g) ?? (text ? [text] : [])

interface ScriptedLlmOptions {
  /**
   * Answer a request identical to one made less than this many ms before (same model, messages
   * and tools; any of the recent ones, as one step's several requests are repeated together) as
   * that one was answered, without taking the next queued reply, as a model at
   * temperature 0 would. Voice calls prepare an answer during the caller's pause and ask again if
   * the caller went on; the script stays one reply per turn. Calls in other tests, seconds apart,
   * are not affected.
   */
  readonly sameAnswerWithinMs?: number
  /**
   * Answers a request when nothing is queued, from what it asks (its parsed body): a model whose
   * answer follows from the conversation, for calls whose number of requests depends on timing
   * (an answer prepared during a caller's pause and dropped when they go on).
   */
  readonly answer?: (request: any) => ScriptedReply
  /** The loopback address to listen on (default 127.0.0.1); tests of the outbound policy use another. */
  readonly host?: string
  /** Answer `/v1/embeddings` only after this many ms: an embeddings endpoint too slow for a voice turn. */
  readonly embeddingsDelayMs?: number
}

export const startScriptedLlm = async (options: ScriptedLlmOptions = {}): Promise<ScriptedLlm> => {
  const queue: Array<ScriptedReply> = []
  /** Recent requests and how they were answered, by what they asked. */
  const answered = new Map<string, { readonly at: number; readonly reply: ScriptedReply }>()
  const requests: Array<RecordedRequest> = []
  const embeddingRequests: Array<{ readonly model: unknown; readonly inputs: unknown }> = []
  const sockets = new Set<Socket>()
  let counter = 0

  const answer = async (
    request: any,
    response: http.ServerResponse,
    scripted: ScriptedReply | undefined
  ): Promise<void> => {
    if (!scripted) {
      response.writeHead(500, { "content-type": "application/json" })
      response.end(
        JSON.stringify({ error: { message: "scripted LLM: no reply queued for this request", type: "server_error" } })
      )
      return
    }
    if (scripted.kind === "delay") {
      const clientGone = new Promise<void>((resolve) => response.on("close", resolve))
      const wait = Number.isFinite(scripted.ms) ? sleep(scripted.ms) : new Promise<void>(() => undefined)
      await Promise.race([wait, clientGone])
      if (response.destroyed || !scripted.then) {
        response.destroy()
        return
      }
      return answer(request, response, scripted.then)
    }
    if (scripted.kind === "error") {
      response.writeHead(scripted.status, { "content-type": "application/json" })
      response.end(
        JSON.stringify({ error: { message: scripted.message, type: "scripted_error", code: String(scripted.status) } })
      )
      return
    }
    if (scripted.kind === "breakOff" || scripted.kind === "errorInStream") {
      response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
      for (const token of tokensOf(scripted.content)) {
        const chunk = {
          id: "chatcmpl-broken",
          object: "chat.completion.chunk",
          created: 0,
          model: request.model ?? "scripted",
          choices: [{ index: 0, delta: { content: token }, finish_reason: null }]
        }
        response.write(`data: ${JSON.stringify(chunk)}\n\n`)
      }
      if (scripted.kind === "errorInStream") {
        response.end(`data: ${JSON.stringify({ error: { message: scripted.message, type: "server_error" } })}\n\n`)
        return
      }
      await sleep(20)
      response.destroy()
      return
    }
    const id = `chatcmpl-scripted-${++counter}`
    const created = Math.floor(Date.now() / 1000)
    const model = request.model ?? "scripted"
    const content = scripted.kind === "content" ? scripted.content : (scripted.content ?? null)
    const toolCalls = scripted.kind === "toolCalls" ? toolCallsOf(scripted.calls) : undefined
    const finish = toolCalls ? "tool_calls" : "stop"
    const usage = usageFor(request, (content ?? "") + (toolCalls ? JSON.stringify(toolCalls) : ""), scripted.usage)

    if (!request.stream) {
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify({
        id,
        object: "chat.completion",
        created,
        model,
        choices: [{
          index: 0,
          message: { role: "assistant", content, refusal: null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
          finish_reason: finish,
          logprobs: null
        }],
        usage
      }))
      return
    }

    response.writeHead(200, {
      "content-type": "text/event-stream",
      "cache-control": "no-cache",
      connection: "keep-alive"
    })
    const send = async (choices: Array<unknown>, extra: Record<string, unknown> = {}) => {
      if (response.destroyed) return
      response.write(
        `data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices, ...extra })}\n\n`
      )
      if (scripted.chunkDelayMs) await sleep(scripted.chunkDelayMs)
    }
    await send([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }])
    for (const token of tokensOf(content ?? "")) {
      await send([{ index: 0, delta: { content: token }, finish_reason: null }])
    }
    for (const [index, call] of (toolCalls ?? []).entries()) {
      await send([{
        index: 0,
        delta: {
          tool_calls: [{ index, id: call.id, type: "function", function: { name: call.function.name, arguments: "" } }]
        },
        finish_reason: null
      }])
      const args = call.function.arguments
      for (let at = 0; at < args.length; at += 16) {
        await send([{
          index: 0,
          delta: { tool_calls: [{ index, function: { arguments: args.slice(at, at + 16) } }] },
          finish_reason: null
        }])
      }
    }
    await send([{ index: 0, delta: {}, finish_reason: finish }])
    if (request.stream_options?.include_usage) await send([], { usage })
    if (!response.destroyed) response.end("data: [DONE]\n\n")
  }

  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      let body: any = undefined
      try {
        body = JSON.parse(Buffer.concat(chunks).toString("utf8") || "null")
      } catch {
        body = Buffer.concat(chunks).toString("utf8")
      }
      const path = (request.url ?? "/").split("?")[0]!
      if (request.method === "POST" && path === "/v1/embeddings") {
        embeddingRequests.push({
          model: body?.model,
          inputs: typeof body?.input === "string" ? 1 : body?.input?.length
        })
        if (options.embeddingsDelayMs === undefined) return answerEmbeddings(body, response)
        return void sleep(options.embeddingsDelayMs).then(() => {
          if (!response.destroyed) answerEmbeddings(body, response)
        })
      }
      if (request.method !== "POST" || path !== "/v1/chat/completions") {
        response.writeHead(404, { "content-type": "application/json" })
        response.end(JSON.stringify({ error: { message: `scripted LLM: no route ${request.method} ${path}` } }))
        return
      }
      requests.push({
        method: request.method,
        path,
        headers: request.headers,
        body,
        toolNames: Array.isArray(body?.tools) ? body.tools.map((tool: any) => tool?.function?.name) : [],
        stream: body?.stream === true,
        receivedAt: Date.now(),
        abandoned: () => response.destroyed && !response.writableFinished
      })
      const key = options.sameAnswerWithinMs === undefined
        ? undefined
        : JSON.stringify([body?.model, body?.messages, body?.tools])
      const earlier = key === undefined ? undefined : answered.get(key)
      const repeated = earlier !== undefined && Date.now() - earlier.at < options.sameAnswerWithinMs!
      const scripted = repeated ? earlier.reply : (queue.shift() ?? options.answer?.(body ?? {}))
      if (key !== undefined && scripted) {
        for (const [known, { at }] of answered) {
          if (Date.now() - at >= options.sameAnswerWithinMs!) answered.delete(known)
        }
        answered.set(key, { at: Date.now(), reply: scripted })
      }
      answer(body ?? {}, response, scripted).catch(() => response.destroy())
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  const host = options.host ?? "127.0.0.1"
  await new Promise<void>((resolve) => server.listen(0, host, resolve))
  const { port } = server.address() as AddressInfo

  return {
    baseUrl: `http://${host}:${port}/v1`,
    requests,
    embeddingRequests,
    enqueue: (...replies) => void queue.push(...replies),
    pending: () => queue.length,
    reset: () => {
      queue.length = 0
      requests.length = 0
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
