import * as fs from "node:fs"
import * as fsp from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { ensurePrivateDir, PRIVATE_FILE_MODE, PRIVATE_UMASK } from "../privateFiles.ts"

/**
 * The embedded database's thread, in plain promises and Node's own modules: the command line starts
 * it before it loads the rest of itself (app/main.ts), so PGlite's start on this thread and the
 * loading of talkgraph's code on the main thread overlap, each on a core. The layer
 * (embeddedPostgres.ts) takes over a thread started so, or starts one.
 */

/** The data dir's lock: the pid of the process whose database thread uses it. */
const LOCK_FILE = "talkgraph.pid"

/** Another live process holds the data dir. */
export class DataDirLocked extends Error {}

/** The port in the socket's name, `.s.PGSQL.<port>`: what PostgreSQL clients look for in a socket directory. */
export const SOCKET_PORT = 5432

/** Longest Unix socket path every platform takes (sun_path is 104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 103

/**
 * The database thread's young generation. Its JavaScript is PGlite's glue and the socket's framing,
 * whose garbage is small and short-lived; left to V8 it grew to 9–12 MB during start and stayed so.
 * Contacts ingest ran at the same rate with this cap (100,000 rows, both in turn on a loaded machine).
 */
const DATABASE_THREAD_YOUNG_GENERATION_MB = 6

export interface DatabaseThread {
  readonly worker: Worker
  /** The socket's directory, the `host` PostgreSQL clients take. */
  readonly socketDir: string
  /** Closes the database (PGlite writes its last pages), ends the thread and lets go of the data dir. */
  readonly stop: () => Promise<void>
}

interface WorkerReply {
  readonly started?: boolean
  readonly error?: string
  readonly stopped?: boolean
}

const isAlive = (pid: number) => {
  try {
    process.kill(pid, 0)
    return true
  } catch {
    return false
  }
}

/**
 * PGlite is a single in-process backend: two processes opening the same directory would corrupt
 * it, so the data dir is locked by pid. A lock left by a dead process is taken over.
 */
const lockDataDir = async (dir: string) => {
  await ensurePrivateDir(dir)
  const lockFile = path.join(dir, LOCK_FILE)
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      await fsp.writeFile(lockFile, String(process.pid), { flag: "wx", mode: PRIVATE_FILE_MODE })
      return lockFile
    } catch {
      const holder = Number((await fsp.readFile(lockFile, "utf8").catch(() => "")).trim())
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
        throw new DataDirLocked(`process ${holder}`)
      }
      await fsp.rm(lockFile, { force: true })
    }
  }
  throw new DataDirLocked("another process")
}

/**
 * The directory for the database's socket: the data dir itself, owner-only. A data dir whose path
 * is too long for a socket gets a fresh owner-only directory under the system's temporary one.
 */
const socketDirectory = async (dir: string) =>
  Buffer.byteLength(path.join(dir, `.s.PGSQL.${SOCKET_PORT}`)) <= MAX_SOCKET_PATH
    ? { dir, created: false }
    : { dir: await fsp.mkdtemp(path.join(os.tmpdir(), "talkgraph-db-")), created: true }

/** Waits for the worker's first reply, or for it to die first. */
const nextReply = (worker: Worker) =>
  new Promise<WorkerReply>((resolve, reject) => {
    const onMessage = (reply: WorkerReply) => {
      worker.off("error", reject).off("exit", onExit)
      resolve(reply)
    }
    const onExit = (code: number) => reject(new Error(`the embedded database thread exited (code ${code})`))
    worker.once("message", onMessage).once("error", reject).once("exit", onExit)
  })

const start = async (dir: string): Promise<DatabaseThread> => {
  // Everything under `dir` is owner-only: PGlite creates files with whatever the umask allows.
  process.umask(PRIVATE_UMASK)
  const lockFile = await lockDataDir(dir)
  const socket = await socketDirectory(dir).catch(async (error) => {
    await fsp.rm(lockFile, { force: true })
    throw error
  })
  const letGo = async () => {
    if (socket.created) await fsp.rm(socket.dir, { recursive: true, force: true })
    await fsp.rm(lockFile, { force: true })
  }
  const worker = new Worker(new URL("./pgliteWorker.mjs", import.meta.url), {
    resourceLimits: { maxYoungGenerationSizeMb: DATABASE_THREAD_YOUNG_GENERATION_MB },
    workerData: { pgdata: path.join(dir, "pgdata"), socketPath: path.join(socket.dir, `.s.PGSQL.${SOCKET_PORT}`) }
  })
  const reply = await nextReply(worker).catch((error: unknown) => ({ error: String(error) }) as WorkerReply)
  if (!reply.started) {
    await worker.terminate()
    await letGo()
    throw new Error(reply.error)
  }
  return {
    worker,
    socketDir: socket.dir,
    stop: async () => {
      // A thread that died already has nothing to close.
      const stopped = nextReply(worker).catch(() => undefined)
      worker.postMessage("stop")
      await stopped
      await worker.terminate()
      await letGo()
    }
  }
}

interface Ahead {
  readonly thread: Promise<DatabaseThread>
  taken: boolean
  /** Set while the thread runs untaken: it then lets the process exit, and lets go of the data dir as it does. */
  untaken?: () => void
}

/** Threads started ahead of the layer that takes them, by data dir. */
const startedAhead = new Map<string, Ahead>()

/**
 * Starts the thread for `dir` now, for `takeDatabaseThread` to take later, if `dir` holds a
 * database already: a new data dir is made only once the settings and the port have been checked.
 * Until it is taken the thread keeps nothing alive: a command that fails before it needs the
 * database (a bad setting, a busy port) exits as it would have, and lets go of the data dir.
 */
export const startDatabaseThreadAhead = (dir: string) => {
  const resolved = path.resolve(dir)
  if (startedAhead.has(resolved) || !fs.existsSync(path.join(resolved, "pgdata", "PG_VERSION"))) return
  const ahead: Ahead = { thread: start(resolved), taken: false }
  startedAhead.set(resolved, ahead)
  ahead.thread.then(
    ({ socketDir, worker }) => {
      if (ahead.taken) return
      const letGoOnExit = () => {
        if (socketDir !== resolved) fs.rmSync(socketDir, { recursive: true, force: true })
        fs.rmSync(path.join(resolved, LOCK_FILE), { force: true })
      }
      worker.unref()
      process.once("exit", letGoOnExit)
      ahead.untaken = () => {
        process.off("exit", letGoOnExit)
        worker.ref()
      }
    },
    // Reported by the layer that takes it, as if it had started the thread itself.
    () => undefined
  )
}

/** The thread started ahead for `dir`, or a new one. */
export const takeDatabaseThread = async (dir: string): Promise<DatabaseThread> => {
  const resolved = path.resolve(dir)
  const ahead = startedAhead.get(resolved)
  if (ahead === undefined) return start(resolved)
  startedAhead.delete(resolved)
  ahead.taken = true
  const thread = await ahead.thread
  ahead.untaken?.()
  return thread
}
