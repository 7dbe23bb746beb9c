/**
 * The chat client's transport alone: a streamed chat completion (30 token events and a usage
 * event) requested from a loopback stand-in, through the direct client the chat path uses
 * (`OutboundHttp.send` + `readReply` + `EventStreamDecoder`) and through the policy's Effect
 * `HttpClient` (`execute` + `boundedReplyStream` + the same decoder). The stand-in is the same for
 * both, so the difference in CPU per request is the client's. Figures: µs of CPU and wall time
 * per request, 2,000 requests one after another and 2,000 at 50 at a time.
 *
 *   npx tsx bench/chatTransport.ts
 */
import { HttpClientRequest } from "@effect/platform"
import { Effect, Either, Exit, Scope, Stream } from "effect"
import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { StringDecoder } from "node:string_decoder"
import { EventStreamDecoder } from "../layers/llm/eventStreamDecoder.ts"
import { makeOutboundHttp } from "../layers/outbound/outboundHttp.ts"
import { boundedReplyStream, readReply, REPLY_LIMITS } from "../layers/outbound/replyBody.ts"
import { parseOutboundAllow } from "../src/outbound/outboundPolicy.ts"

const REQUESTS = Number(process.env.BENCH_REQUESTS ?? 2000)
const CONCURRENCY = 50

const events = [
  ...Array.from(
    { length: 30 },
    (_, i) => `data: ${JSON.stringify({ id: "c", choices: [{ index: 0, delta: { content: ` w${i}` } }] })}\n\n`
  ),
  `data: ${JSON.stringify({ id: "c", choices: [], usage: { prompt_tokens: 9, completion_tokens: 30 } })}\n\n`,
  "data: [DONE]\n\n"
]

const server = http.createServer((request, response) => {
  request.resume()
  request.on("end", () => {
    response.writeHead(200, { "content-type": "text/event-stream" })
    for (const event of events) response.write(event)
    response.end()
  })
})
await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
const url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/chat/completions`)
const payload = JSON.stringify({ model: "m", stream: true, messages: [{ role: "user", content: "Hi" }] })

const scope = Effect.runSync(Scope.make())
const outbound = await Effect.runPromise(
  makeOutboundHttp(Either.getOrThrow(parseOutboundAllow("loopback"))).pipe(Scope.extend(scope))
)
const headers = { "content-type": "application/json", accept: "text/event-stream", authorization: "Bearer sk-1" }

const direct = async () => {
  const response = await outbound.send("model", {
    url,
    method: "POST",
    headers: { ...headers, "content-length": Buffer.byteLength(payload) },
    body: payload,
    resendOnStaleConnection: true
  })
  const text = new StringDecoder("utf8")
  const decoder = new EventStreamDecoder(REPLY_LIMITS.chatStreamEvent)
  let count = 0
  await readReply(response, REPLY_LIMITS.chatStream, {
    onPiece: (piece) => void (count += decoder.push(text.write(piece)).length)
  })
  return count + decoder.end().length
}

const client = outbound.client("model")
const viaHttpClient = () =>
  Effect.runPromise(Effect.gen(function*() {
    const response = yield* client.execute(
      HttpClientRequest.post(url).pipe(HttpClientRequest.setHeaders(headers), HttpClientRequest.bodyText(payload))
    )
    const text = new StringDecoder("utf8")
    const decoder = new EventStreamDecoder(REPLY_LIMITS.chatStreamEvent)
    let count = 0
    yield* boundedReplyStream(response, REPLY_LIMITS.chatStream).pipe(
      Stream.runForEach((piece) => Effect.sync(() => void (count += decoder.push(text.write(piece)).length)))
    )
    return count + decoder.end().length
  }))

const measure = async (name: string, request: () => Promise<number>, concurrency: number) => {
  for (let i = 0; i < 200; i++) await request() // warm-up
  const cpu = process.cpuUsage()
  const started = performance.now()
  let next = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next++ < REQUESTS) if ((await request()) !== events.length) throw new Error("events lost")
  }))
  const wall = performance.now() - started
  const used = process.cpuUsage(cpu)
  console.log(
    `${name}, ${concurrency} at a time: ${((used.user + used.system) / REQUESTS).toFixed(0)} µs CPU, ${
      (wall * 1000 / REQUESTS).toFixed(0)
    } µs wall per request`
  )
}

for (const concurrency of [1, CONCURRENCY]) {
  await measure("direct client", direct, concurrency)
  await measure("Effect HttpClient", viaHttpClient, concurrency)
  await measure("direct client", direct, concurrency)
  await measure("Effect HttpClient", viaHttpClient, concurrency)
}
await Effect.runPromise(Scope.close(scope, Exit.void))
server.close()
