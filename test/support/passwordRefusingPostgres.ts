import * as net from "node:net"

/** A backend message: type byte, then a length that counts itself and the body. */
const message = (type: string, body: Buffer) => {
  const header = Buffer.alloc(5)
  header.write(type, 0, "latin1")
  header.writeInt32BE(body.length + 4, 1)
  return Buffer.concat([header, body])
}

const AUTHENTICATION_CLEARTEXT_PASSWORD = 3
const SSL_REQUEST_CODE = 80877103

/**
 * A PostgreSQL server, as far as the wire protocol goes, whose pg_hba asks every client for its
 * password (method `password`) and refuses it: ErrorResponse FATAL 28P01, as a real server does
 * after a wrong password (https://www.postgresql.org/docs/current/protocol-flow.html#PROTOCOL-FLOW-START-UP).
 */
export const startPasswordRefusingPostgres = async () => {
  const sockets = new Set<net.Socket>()
  const server = net.createServer((socket) => {
    sockets.add(socket)
    socket.on("close", () => sockets.delete(socket))
    socket.on("error", () => undefined)
    let buffered = Buffer.alloc(0)
    let user = ""
    let started = false
    socket.on("data", (chunk) => {
      buffered = Buffer.concat([buffered, chunk])
      while (true) {
        if (!started) {
          if (buffered.length < 8) return
          const length = buffered.readInt32BE(0)
          if (buffered.length < length) return
          const code = buffered.readInt32BE(4)
          const body = buffered.subarray(8, length)
          buffered = buffered.subarray(length)
          if (code === SSL_REQUEST_CODE) {
            socket.write("N")
            continue
          }
          const fields = body.toString("utf8").split("\0")
          user = fields[fields.indexOf("user") + 1] ?? ""
          started = true
          const request = Buffer.alloc(4)
          request.writeInt32BE(AUTHENTICATION_CLEARTEXT_PASSWORD)
          socket.write(message("R", request))
          continue
        }
        if (buffered.length < 5) return
        const length = buffered.readInt32BE(1)
        if (buffered.length < length + 1) return
        buffered = buffered.subarray(length + 1)
        const error =
          ["SFATAL", "VFATAL", "C28P01", `Mpassword authentication failed for user "${user}"`].map((field) =>
            `${field}\0`
          ).join("") + "\0"
        socket.end(message("E", Buffer.from(error, "utf8")))
        return
      }
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy()
        server.close(() => resolve())
      })
  }
}
