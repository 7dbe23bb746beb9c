import * as http from "node:http"
import type { AddressInfo } from "node:net"

/**
 * A round-robin HTTP proxy in front of several talkgraph processes, as in production: carriers
 * call PUBLIC_URL, and whichever live process gets the callback must handle it. A backend that
 * refuses the connection is skipped.
 */
export const startLoadBalancer = async () => {
  const backends: Array<string> = []
  // Like a load balancer: connections to backends are reused and closed after 60 s idle, and at most
  // 1,000 are open to each (HAProxy's maxconn), so a burst queues instead of exhausting descriptors.
  const agent = new http.Agent({ keepAlive: true, timeout: 60_000, maxSockets: 1000 })
  /** Why forwarding failed, with how often: what a 502 from the balancer stood for. */
  const forwardFailures = new Map<string, number>()
  /**
   * Requests whose answer, the first time each is sent, is lost (as a network fault between caller
   * and balancer does) or held back `delayMs` (as a backend that answers late does).
   */
  let faultyAnswers:
    | {
      handled: number
      seen: Set<string>
      matches: (path: string, body: string) => boolean
      fault: { lose: true } | { delayMs: number }
    }
    | undefined
  let next = 0
  /** Whether this handled request's answer meets the fault: the first time each matching one is sent. */
  const firstOfFaulty = (faulty: NonNullable<typeof faultyAnswers>, path: string, body: string) => {
    if (!faulty.matches(path, body)) return false
    faulty.handled++
    const key = `${path} ${body}`
    if (faulty.seen.has(key)) return false
    faulty.seen.add(key)
    return true
  }
  const faulty = (matches: (path: string, body: string) => boolean, fault: { lose: true } | { delayMs: number }) => {
    const entry = { handled: 0, seen: new Set<string>(), matches, fault }
    faultyAnswers = entry
    return () => entry.handled
  }

  const forward = (target: string, request: http.IncomingMessage, body: Buffer) =>
    new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>((resolve, reject) => {
      const url = new URL(request.url ?? "/", target)
      const outgoing = http.request(url, { method: request.method, headers: request.headers, agent }, (response) => {
        const chunks: Array<Buffer> = []
        response.on("data", (chunk) => chunks.push(chunk))
        response.on(
          "end",
          () => resolve({ status: response.statusCode ?? 502, headers: response.headers, body: Buffer.concat(chunks) })
        )
      })
      outgoing.on("error", (error: Error & { code?: string }) => {
        if (outgoing.reusedSocket) error.code = `${error.code} on a reused connection`
        reject(error)
      })
      outgoing.end(body)
    })

  // Idle client connections are kept 60 s, an AWS Application Load Balancer's default idle timeout
  // (Node's own 5 s default raced carriers reusing a connection the balancer was closing).
  const server = http.createServer({ keepAliveTimeout: 60_000, headersTimeout: 61_000 }, async (request, response) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of request) chunks.push(chunk as Buffer)
    const body = Buffer.concat(chunks)
    for (let tries = 0; tries < backends.length; tries++) {
      const target = backends[next++ % backends.length]!
      try {
        const reply = await forward(target, request, body)
        const faults = faultyAnswers
        if (faults !== undefined && firstOfFaulty(faults, request.url ?? "/", body.toString())) {
          const fault = faults.fault
          if ("lose" in fault) {
            request.socket.destroy()
            return
          }
          await new Promise((resolve) => setTimeout(resolve, fault.delayMs))
        }
        response.writeHead(reply.status, reply.headers)
        response.end(reply.body)
        return
      } catch (error) {
        // that process is gone; try the next one
        const code = (error as { code?: string }).code ?? String(error)
        forwardFailures.set(code, (forwardFailures.get(code) ?? 0) + 1)
      }
    }
    response.writeHead(502)
    response.end()
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    add: (backend: string) => backends.push(backend),
    forwardFailures: () => new Map(forwardFailures),
    /**
     * Requests that `matches` are handled by a backend, but the first time each is sent its
     * caller's connection is reset before the answer reaches it: the caller cannot tell whether it
     * was handled. The same request sent again is answered. Returns how many matching requests
     * backends have handled so far, answers lost or not.
     */
    loseFirstAnswers: (matches: (path: string, body: string) => boolean) => faulty(matches, { lose: true }),
    /** As `loseFirstAnswers`, but the first answer reaches its caller `delayMs` late (if it still waits). */
    delayFirstAnswers: (matches: (path: string, body: string) => boolean, delayMs: number) =>
      faulty(matches, { delayMs }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        agent.destroy()
        server.close(() => resolve())
      })
  }
}
