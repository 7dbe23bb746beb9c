// A customer API that answers every request at once with a small JSON body, in a process of its
// own so its work does not share the measured process's event loop. It reports its port on stdout.
import * as http from "node:http"

const body = JSON.stringify({ order: { id: "A-42", status: "shipped", eta: "tomorrow" } })
const server = http.createServer((request, response) => {
  request.resume()
  request.on("end", () => {
    response.writeHead(200, { "content-type": "application/json", "content-length": Buffer.byteLength(body) })
    response.end(body)
  })
})
server.keepAliveTimeout = 60_000
server.listen(0, "127.0.0.1", () => process.stdout.write(`${server.address().port}\n`))
