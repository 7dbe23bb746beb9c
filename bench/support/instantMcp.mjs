// An MCP server (the SDK's own, Streamable HTTP, stateful sessions) answering at once, in its own
// process so its work does not count against talkgraph's. Prints its port.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js"
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js"
import { randomUUID } from "node:crypto"
import * as http from "node:http"
import { z } from "zod"

const sessions = new Map()

const makeServer = () => {
  const server = new McpServer({ name: "bench-mcp", version: "1.0.0" })
  server.registerTool("look_up_order", {
    description: "Finds an order",
    inputSchema: { order_id: z.string() },
    annotations: { readOnlyHint: true }
  }, ({ order_id }) => ({ content: [{ type: "text", text: `Order ${order_id} has shipped.` }] }))
  return server
}

const readJson = (request) =>
  new Promise((resolve) => {
    const chunks = []
    request.on("data", (chunk) => chunks.push(chunk))
    request.on("end", () => {
      const text = Buffer.concat(chunks).toString("utf8")
      resolve(text === "" ? undefined : JSON.parse(text))
    })
  })

const server = http.createServer(async (request, response) => {
  const body = request.method === "POST" ? await readJson(request) : undefined
  const id = request.headers["mcp-session-id"]
  if (id !== undefined) {
    const transport = sessions.get(id)
    if (!transport) {
      response.writeHead(404).end()
      return
    }
    return transport.handleRequest(request, response, body)
  }
  if (!isInitializeRequest(body)) {
    response.writeHead(400).end()
    return
  }
  const transport = new StreamableHTTPServerTransport({
    sessionIdGenerator: () => randomUUID(),
    onsessioninitialized: (sessionId) => sessions.set(sessionId, transport),
    onsessionclosed: (sessionId) => sessions.delete(sessionId)
  })
  await makeServer().connect(transport)
  return transport.handleRequest(request, response, body)
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`))
