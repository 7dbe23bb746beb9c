// Runs the embedded PGlite and its wire-protocol socket on a thread of its own: every statement
// executes in WASM synchronously, so on the main thread each one would stall the event loop that
// carries HTTP requests and calls, and a two-core machine would leave its second core idle.
import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { parentPort, workerData } from "node:worker_threads"

// PGlite unpacks a new database with every file world-writable (0666), whatever the umask; files
// it creates later follow the umask. Tightened at each start, so older data dirs are fixed too.
const tighten = async (dir) => {
  for (const entry of await fs.readdir(dir, { withFileTypes: true })) {
    const at = path.join(dir, entry.name)
    if (entry.isDirectory()) {
      await fs.chmod(at, 0o700)
      await tighten(at)
    } else if (entry.isFile()) {
      await fs.chmod(at, 0o600)
    }
  }
}

const start = async () => {
  // pg_trgm backs the usage report's number search (migration 0006).
  const db = await PGlite.create(workerData.pgdata, { extensions: { pg_trgm } })
  await fs.chmod(workerData.pgdata, 0o700)
  await tighten(workerData.pgdata)
  // A Unix socket in an owner-only directory: no other local user can connect, unlike a loopback
  // port, which any of them could reach with psql (PGlite asks no password). A socket left by a
  // process that died would refuse the listen; the data-dir lock says none is running.
  await fs.rm(workerData.socketPath, { force: true })
  const server = new PGLiteSocketServer({ db, path: workerData.socketPath, maxConnections: 16 })
  await server.start()
  await fs.chmod(workerData.socketPath, 0o600)
  parentPort.once("message", async () => {
    await server.stop()
    await db.close()
    parentPort.postMessage({ stopped: true })
  })
  parentPort.postMessage({ started: true })
}

start().catch((error) =>
  parentPort.postMessage({ error: error instanceof Error ? error.stack ?? error.message : String(error) })
)
