/**
 * A customer's MCP server on 127.0.0.1 (random port), made with the MCP SDK's own `McpServer`,
 * for tests of MCP tools. It speaks Streamable HTTP at `/mcp` the way the SDK's server does
 * (stateful: a session id issued at `initialize`, a request without one refused with 400, an
 * unknown one with 404, `DELETE` ending it), and the legacy HTTP+SSE transport at `/sse` +
 * `/messages`. With `token`, every request without `Authorization: Bearer <token>` gets 401.
 *
 * Tools:
 *   look_up_order {order_id}  → "Order <id> has shipped and arrives tomorrow." (read-only)
 *   book_slot {day}           → "Booked <day>." (changes something)
 *   always_fails {}           → an `isError` result: "The booking system is down."
 *   echo_secret {}            → the Authorization header it was sent (a server that echoes its request)
 *   slow {ms}                 → answers after ms milliseconds
 *   huge {}                   → 6 MB of text
 */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import type { AddressInfo, Socket } from "node:net"
import { z } from "zod"

export interface RecordedMcpRequest {
  readonly method: string
  readonly path: string
  readonly sessionId: string | undefined
  readonly authorization: string | undefined
  /** The JSON-RPC method of a POST (`initialize`, `tools/list`, `tools/call`, …). */
  readonly rpcMethod: string | undefined
}

export interface LoopbackMcp {
  /** `http://127.0.0.1:PORT` */
  readonly url: string
  readonly host: string
  readonly requests: Array<RecordedMcpRequest>
  /** Sessions begun and not yet ended by the client. */
  readonly openSessions: () => number
  readonly close: () => Promise<void>
}

const text = (value: string) => ({ content: [{ type: "text" as const, text: value }] })

const makeServer = (authorization: () => string | undefined) => {
  const server = new McpServer({ name: "orders-mcp", version: "1.0.0" })
  server.registerTool("look_up_order", {
    description: "Finds an order's status by its number",
    inputSchema: { order_id: z.string().describe("The order number") },
    annotations: { readOnlyHint: true }
  }, ({ order_id }) => text(`Order ${order_id} has shipped and arrives tomorrow.`))
  server.registerTool("book_slot", {
    description: "Books a delivery slot",
    inputSchema: { day: z.string() }
  }, ({ day }) => text(`Booked ${day}.`))
  server.registerTool("always_fails", { description: "A tool whose backend is down" }, () => ({
    ...text("The booking system is down."),
    isError: true
  }))
  server.registerTool(
    "echo_secret",
    { description: "Echoes the request's credential" },
    () => text(`You sent ${authorization() ?? "nothing"}`)
  )
  server.registerTool("slow", { description: "Answers late", inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms))
    return text("finally")
  })
  server.registerTool("huge", { description: "A 6 MB answer" }, () => text("x".repeat(6 * 1024 * 1024)))
  return server
}

const readJson = (request: http.IncomingMessage): Promise<unknown> =>
  new Promise((resolve, reject) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8")
      try {
        resolve(body === "" ? undefined : JSON.parse(body))
      } catch (error) {
        reject(error)
      }
    })
    request.on("error", reject)
  })

const refuse = (response: http.ServerResponse, status: number, message: string) => {
  response.writeHead(status, { "content-type": "application/json" })
  response.end(JSON.stringify({ jsonrpc: "2.0", error: { code: -32000, message }, id: null }))
}

export const startLoopbackMcp = async (options: { readonly token?: string } = {}): Promise<LoopbackMcp> => {
  const requests: Array<RecordedMcpRequest> = []
  const sessions = new Map<string, StreamableHTTPServerTransport>()
  const sseSessions = new Map<string, SSEServerTransport>()
  const sockets = new Set<Socket>()
  let currentAuthorization: string | undefined

  const server = http.createServer(async (request, response) => {
    const url = new URL(request.url ?? "/", "http://localhost")
    const sessionId = request.headers["mcp-session-id"] as string | undefined
    const authorization = request.headers.authorization
    const body = request.method === "POST" ? await readJson(request).catch(() => undefined) : undefined
    const rpcMethod = (body as { method?: string } | undefined)?.method
    requests.push({ method: request.method ?? "", path: url.pathname, sessionId, authorization, rpcMethod })
    if (options.token !== undefined && authorization !== `Bearer ${options.token}`) {
      response.writeHead(401, { "www-authenticate": "Bearer", "content-type": "application/json" })
      response.end(JSON.stringify({ error: "invalid_token" }))
      return
    }
    currentAuthorization = authorization
    if (url.pathname === "/mcp") {
      if (sessionId !== undefined) {
        const transport = sessions.get(sessionId)
        if (!transport) return refuse(response, 404, "Session not found")
        return transport.handleRequest(request, response, body)
      }
      if (request.method !== "POST" || !isInitializeRequest(body)) {
        return refuse(response, 400, "Bad Request: No valid session ID provided")
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport)
        },
        onsessionclosed: (id) => {
          sessions.delete(id)
        }
      })
      await makeServer(() => currentAuthorization).connect(transport)
      return transport.handleRequest(request, response, body)
    }
    if (url.pathname === "/sse" && request.method === "GET") {
      const transport = new SSEServerTransport("/messages", response)
      sseSessions.set(transport.sessionId, transport)
      response.on("close", () => sseSessions.delete(transport.sessionId))
      await makeServer(() => currentAuthorization).connect(transport)
      return
    }
    if (url.pathname === "/messages" && request.method === "POST") {
      const transport = sseSessions.get(url.searchParams.get("sessionId") ?? "")
      if (!transport) return refuse(response, 404, "Session not found")
      return transport.handlePostMessage(request, response, body)
    }
    refuse(response, 404, "Not Found")
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
    openSessions: () => sessions.size,
    close: async () => {
      for (const transport of [...sessions.values(), ...sseSessions.values()]) await transport.close()
      for (const socket of sockets) socket.destroy()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
