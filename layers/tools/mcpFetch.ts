import type { FetchLike } from "@modelcontextprotocol/sdk/shared/transport.js"
import type * as http from "node:http"
import { Readable } from "node:stream"
import type { OutboundHttpShape, OutboundRequest } from "../../services/OutboundHttp.ts"
import { ReplyTooLarge } from "../outbound/replyBody.ts"

/** A header put on requests to one host only: the credential's, bound to the host it was saved for. */
export interface HostBoundHeader {
  readonly host: string
  readonly name: string
  readonly value: string
}

const METHODS = new Set<OutboundRequest["method"]>(["GET", "POST", "PUT", "PATCH", "DELETE"])

/** Statuses whose answers have no body (a Response refuses one). */
const BODILESS = new Set([101, 204, 205, 304])

const headersOf = (response: http.IncomingMessage): Headers => {
  const headers = new Headers()
  for (const [name, value] of Object.entries(response.headers)) {
    if (Array.isArray(value)) { for (const each of value) headers.append(name, each) }
    else if (value !== undefined) headers.set(name, value)
  }
  return headers
}

/**
 * The answer's body as a web stream that errors (and closes the connection) once more than `cap`
 * bytes came. `onTooLarge` is told too: the SDK takes a broken SSE stream for a network blip and
 * waits to resume it, so the exchange has to be ended from outside.
 */
const cappedBody = (
  response: http.IncomingMessage,
  cap: number,
  onTooLarge: () => void
): ReadableStream<Uint8Array> => {
  let received = 0
  response.on("data", (chunk: Buffer) => {
    received += chunk.length
    if (received > cap && !response.destroyed) {
      response.destroy(new ReplyTooLarge(cap))
      onTooLarge()
    }
  })
  return Readable.toWeb(response) as ReadableStream<Uint8Array>
}

/**
 * The `fetch` the MCP SDK's transports use: every request leaves through the outbound policy
 * (`tools` kind: an address it refuses is refused, when connecting too), never follows a
 * redirect, reads at most `cap` bytes of each answer (an SSE stream included), and carries the
 * credential's header only to the host the credential is bound to, whatever URL the SDK is told
 * to use (an SSE server's `endpoint` event names one).
 */
export const policyFetch = (
  outbound: OutboundHttpShape,
  options: { readonly credential: HostBoundHeader | null; readonly cap: number; readonly onTooLarge: () => void }
): FetchLike =>
async (input, init) => {
  const url = new URL(input)
  const method = (init?.method ?? "GET").toUpperCase() as OutboundRequest["method"]
  if (!METHODS.has(method)) throw new TypeError(`${method} is not a method an MCP client sends`)
  const headers: Record<string, string> = {}
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value
  })
  if (options.credential !== null && url.host.toLowerCase() === options.credential.host) {
    headers[options.credential.name.toLowerCase()] = options.credential.value
  }
  const body = typeof init?.body === "string" || init?.body instanceof Uint8Array ? init.body : undefined
  const signal = init?.signal ?? undefined
  const response = await outbound.send("tool", { url, method, headers, body, signal })
  // A long-lived SSE stream ends when the SDK aborts it (on close), not only when the server ends it.
  signal?.addEventListener("abort", () => response.destroy(), { once: true })
  const status = response.statusCode ?? 502
  if (BODILESS.has(status)) {
    response.resume()
    return new Response(null, { status, headers: headersOf(response) })
  }
  return new Response(cappedBody(response, options.cap, options.onTooLarge), {
    status,
    statusText: response.statusMessage ?? "",
    headers: headersOf(response)
  })
}
