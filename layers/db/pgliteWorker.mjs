// Runs the embedded PGlite and its wire-protocol socket on a thread of its own: every statement
// executes in WASM synchronously, so on the main thread each one would stall the event loop that
// carries HTTP requests and calls, and a two-core machine would leave its second core idle.
import { PGlite } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { parentPort, workerData } from "node:worker_threads"

const start = async () => {
  // pg_trgm backs the usage report's number search (migration 0006).
  const db = await PGlite.create(workerData.pgdata, { extensions: { pg_trgm } })
  const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 16 })
  await server.start()
  parentPort.once("message", async () => {
    await server.stop()
    await db.close()
    parentPort.postMessage({ stopped: true })
  })
  parentPort.postMessage({ port: Number(server.getServerConn().split(":").pop()) })
}

start().catch((error) => parentPort.postMessage({ error: error instanceof Error ? error.stack ?? error.message : String(error) }))
