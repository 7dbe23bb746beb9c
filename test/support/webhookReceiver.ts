import * as http from "node:http"
import type { AddressInfo } from "node:net"
import { Webhook } from "standardwebhooks"

export interface ReceivedMessage {
  readonly id: string
  readonly timestamp: string
  readonly body: Record<string, unknown>
  readonly status: number
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
}

/**
 * A webhook receiver on 127.0.0.1 that checks every message as a Standard Webhooks consumer
 * does (the `standardwebhooks` package: signature and timestamp tolerance), answers 503 to the
 * first `failFirst` well-signed messages, and can be taken down and brought back on the same port.
 * With `unsigned`, it takes any request as a plain HTTP receiver does (Dograh's webhook nodes
 * send no signature) and keeps its method, path and headers.
 */
export const startWebhookReceiver = async (
  options: { readonly failFirst?: number; readonly unsigned?: boolean } = {}
) => {
  let secret: string | null = null
  let failuresLeft = options.failFirst ?? 0
  const messages: Array<ReceivedMessage> = []
  const badSignatures: Array<string> = []
  const handler = (request: http.IncomingMessage, response: http.ServerResponse) => {
    let raw = ""
    request.setEncoding("utf8")
    request.on("data", (chunk: string) => (raw += chunk))
    request.on("end", () => {
      const headers = {
        "webhook-id": String(request.headers["webhook-id"] ?? ""),
        "webhook-timestamp": String(request.headers["webhook-timestamp"] ?? ""),
        "webhook-signature": String(request.headers["webhook-signature"] ?? "")
      }
      let body: Record<string, unknown>
      try {
        body = options.unsigned
          ? (raw === "" ? {} : JSON.parse(raw))
          : new Webhook(secret ?? "").verify(raw, headers) as Record<string, unknown>
      } catch (error) {
        badSignatures.push(`${headers["webhook-id"]}: ${String(error)}`)
        response.writeHead(400).end()
        return
      }
      const status = failuresLeft > 0 ? 503 : 204
      if (failuresLeft > 0) failuresLeft--
      messages.push({
        id: headers["webhook-id"],
        timestamp: headers["webhook-timestamp"],
        body,
        status,
        method: request.method ?? "",
        path: request.url ?? "",
        headers: request.headers
      })
      response.writeHead(status).end()
    })
  }
  let server = http.createServer(handler)
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const port = (server.address() as AddressInfo).port
  const stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve())
      server.closeAllConnections()
    })
  return {
    url: `http://127.0.0.1:${port}/hooks/talkgraph`,
    messages,
    badSignatures,
    /** Messages this receiver accepted (2xx), by `webhook-id`. */
    accepted: () => messages.filter((message) => message.status < 300),
    useSecret: (next: string) => (secret = next),
    failNext: (count: number) => (failuresLeft = count),
    down: stop,
    up: async () => {
      server = http.createServer(handler)
      await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve))
    },
    close: stop
  }
}

export type WebhookReceiver = Awaited<ReturnType<typeof startWebhookReceiver>>
