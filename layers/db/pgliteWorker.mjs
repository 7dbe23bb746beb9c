// Runs the embedded PGlite and its wire-protocol socket on a thread of its own: every statement
// executes in WASM synchronously, so on the main thread each one would stall the event loop that
// carries HTTP requests and calls, and a two-core machine would leave its second core idle.
import { PGlite } from "@electric-sql/pglite"
import { vector } from "@electric-sql/pglite-pgvector"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import * as fs from "node:fs/promises"
import * as path from "node:path"
import { parentPort, workerData } from "node:worker_threads"

// PGlite unpacks a new database with every file world-writable (0666), whatever the umask; files
// it creates later follow the umask (owner-only, set by the main thread). So the modes are
// tightened once per data dir, a new one or one made by an older release, and a marker file says
// it was done: walking every file (over a thousand) at each start cost up to a second on a busy
// machine. A data dir deleted and made anew loses its marker with it.
const TIGHTENED_MARKER = ".talkgraph-modes-tightened"

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

/**
 * The database's memory, sized for a small machine: PostgreSQL's default 128 MB of shared buffers
 * are all touched when the backend starts (about 85 MB of resident memory more than 16 MB),
 * while the working set of a talkgraph database of a few GB is its indexes' upper levels and
 * today's rows. Pages not in the buffers come from the operating system's file cache, which is
 * shared and given back under pressure. work_mem stays at PostgreSQL's 4 MB: the usage report's
 * sorts fit in it.
 */
const SHARED_BUFFERS = "16MB"

/**
 * A new 16 MB WAL segment is created by writing its last byte, not by writing 16 MB of zeros: each
 * write goes through the WebAssembly file layer and a system call, and a bulk import creates a
 * segment every ~30,000 contacts (a tenth of an embedded import's time went to the zeros). The
 * zeros reserve the space up front; without them a full disk is found by a later WAL write, which
 * stops the database (it recovers from its WAL at the next start) rather than failing one statement.
 */
const WAL_SETTINGS = ["-c", "wal_init_zero=off"]

const start = async () => {
  const marker = path.join(workerData.pgdata, TIGHTENED_MARKER)
  // pg_trgm backs the usage report's number search (migration 0006); pgvector ranks knowledge-base
  // embeddings (migration 0020).
  const db = await PGlite.create(workerData.pgdata, {
    extensions: { pg_trgm, vector },
    startParams: [...PGlite.defaultStartParams, "-c", `shared_buffers=${SHARED_BUFFERS}`, ...WAL_SETTINGS]
  })
  const tightened = await fs.stat(marker).then(() => true, () => false)
  if (!tightened) {
    await fs.chmod(workerData.pgdata, 0o700)
    await tighten(workerData.pgdata)
    await fs.writeFile(marker, "", { mode: 0o600 })
  }
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
