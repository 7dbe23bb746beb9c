/**
 * A customer's HTTP API on 127.0.0.1 (random port), for tests of HTTP tools: it records every
 * request (method, path, query, headers, JSON body) and answers like a small order/booking API.
 *
 *   GET    /orders/:id         → 200 {"order": {"id", "status": "shipped", "eta": "tomorrow"}, "customer": {...}}; 404 for "missing"
 *   POST   /bookings           → 201 {"booking_id": "b-1", "received": <body>}
 *   GET    /slow?ms=N          → answers after N ms (never, when the client gives up first)
 *   GET    /huge               → a 6 MB JSON array, streamed
 *   GET    /echo               → 200 with the request's own headers (an API that echoes what it was sent)
 *   GET    /fail               → 500 {"error": "database down"}
 */
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"

export interface RecordedApiRequest {
  readonly method: string
  readonly path: string
  readonly query: Readonly<Record<string, string>>
  readonly headers: http.IncomingHttpHeaders
  readonly body: any
}

export interface LoopbackApi {
  /** `http://127.0.0.1:PORT` */
  readonly url: string
  readonly host: string
  readonly requests: Array<RecordedApiRequest>
  readonly close: () => Promise<void>
}

const json = (response: http.ServerResponse, status: number, value: unknown) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify(value))
}

export const startLoopbackApi = async (): Promise<LoopbackApi> => {
  const requests: Array<RecordedApiRequest> = []
  const sockets = new Set<Socket>()
  const server = http.createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const url = new URL(request.url ?? "/", "http://localhost")
      const text = Buffer.concat(chunks).toString("utf8")
      let body: any = undefined
      try {
        body = text === "" ? undefined : JSON.parse(text)
      } catch {
        body = text
      }
      requests.push({
        method: request.method ?? "",
        path: url.pathname,
        query: Object.fromEntries(url.searchParams),
        headers: request.headers,
        body
      })
      const order = /^\/orders\/([^/]+)$/.exec(url.pathname)
      if (request.method === "GET" && order) {
        const id = decodeURIComponent(order[1]!)
        if (id === "missing") return json(response, 404, { error: "no such order" })
        return json(response, 200, {
          order: { id, status: "shipped", eta: "tomorrow" },
          customer: { name: "Ada Lovelace", notes: "x".repeat(50) }
        })
      }
      if (request.method === "POST" && url.pathname === "/bookings") {
        return json(response, 201, { booking_id: "b-1", received: body })
      }
      if (url.pathname === "/slow") {
        const timer = setTimeout(() => json(response, 200, { slow: true }), Number(url.searchParams.get("ms") ?? 0))
        response.on("close", () => clearTimeout(timer))
        return
      }
      if (url.pathname === "/huge") {
        response.writeHead(200, { "content-type": "application/json" })
        const piece = Buffer.from(`"${"y".repeat(1022)}",`)
        let sent = 0
        const push = () => {
          while (sent < 6 * 1024 * 1024) {
            sent += piece.length
            if (!response.write(piece)) return void response.once("drain", push)
          }
          response.end("\"end\"]")
        }
        response.write("[")
        return push()
      }
      if (url.pathname === "/echo") return json(response, 200, { headers: request.headers })
      if (url.pathname === "/fail") return json(response, 500, { error: "database down" })
      json(response, 404, { error: "not found" })
    })
  })
  server.on("connection", (socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    host: `127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
