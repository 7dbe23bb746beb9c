import * as http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A round-robin HTTP proxy in front of several talkgraph processes, as in production: carriers
 * call PUBLIC_URL, and whichever live process gets the callback must handle it. A backend that
 * refuses the connection is skipped.
 */
export const startLoadBalancer = async () => {
  const backends: Array<string> = []
  let next = 0

  const forward = (target: string, request: http.IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const url = new URL(request.url ?? "/", target)
      const outgoing = http.request(url, { method: request.method, headers: request.headers }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk) => chunks.push(chunk))
        response.on(
          "end",
          () => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: Buffer.concat(chunks) })
        )
      })
      outgoing.on("error", reject)
      outgoing.end(body)
    })

  const server = http.createServer(async (request, response) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    for (let tries = 0; tries < backends.length; tries++) {
      const target = backends[next++ % backends.length]!
      try {
        const reply = await forward(target, request, body)
        response.writeHead(reply.status, reply.headers)
        response.end(reply.body)
        return
      } catch {
        // that process is gone; try the next one
      }
    }
    response.writeHead(502)
    response.end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    add: (backend: string) => backends.push(backend),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
