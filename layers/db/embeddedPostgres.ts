import { Effect, Runtime, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { Worker } from "node:worker_threads"
import { ensurePrivateDir, PRIVATE_FILE_MODE, PRIVATE_UMASK } from "../privateFiles.ts"

export class EmbeddedPostgresFailed extends Schema.TaggedError<EmbeddedPostgresFailed>()("EmbeddedPostgresFailed", {
  message: Schema.String
}) {}

export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  message: Schema.String
}) {}

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
const lockDataDir = (dir: string) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        await ensurePrivateDir(dir)
        const lockFile = path.join(dir, "talkgraph.pid")
        for (let attempt = 0; attempt < 2; attempt++) {
          try {
            await fs.writeFile(lockFile, String(process.pid), { flag: "wx", mode: PRIVATE_FILE_MODE })
            return lockFile
          } catch {
            const holder = Number((await fs.readFile(lockFile, "utf8").catch(() => "")).trim())
            if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && isAlive(holder)) {
              throw new Error(`process ${holder}`)
            }
            await fs.rm(lockFile, { force: true })
          }
        }
        throw new Error("another process")
      },
      catch: (error) =>
        new DataDirInUse({
          message: `The embedded database in ${dir} is in use by ${(error as Error).message}. ` +
            "Stop it, or set DATABASE_URL to share a PostgreSQL database between processes."
        })
    }),
    (lockFile) => Effect.promise(() => fs.rm(lockFile, { force: true }))
  )

interface WorkerReply {
  readonly started?: boolean
  readonly error?: string
  readonly stopped?: boolean
}

/** The port in the socket's name, `.s.PGSQL.<port>`: what PostgreSQL clients look for in a socket directory. */
const SOCKET_PORT = 5432

/** Longest Unix socket path every platform takes (sun_path is 104 bytes on macOS, 108 on Linux). */
const MAX_SOCKET_PATH = 103

/**
 * The directory for the database's socket: the data dir itself, owner-only. A data dir whose path
 * is too long for a socket gets a fresh owner-only directory under the system's temporary one.
 */
const socketDirectory = (dir: string) =>
  Buffer.byteLength(path.join(dir, `.s.PGSQL.${SOCKET_PORT}`)) <= MAX_SOCKET_PATH
    ? Effect.succeed(dir)
    : Effect.acquireRelease(
      Effect.promise(() => fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-db-"))),
      (created) => Effect.promise(() => fs.rm(created, { recursive: true, force: true }))
    )

/**
 * The database thread's young generation. Its JavaScript is PGlite's glue and the socket's framing,
 * whose garbage is small and short-lived; left to V8 it grew to 9–12 MB during start and stayed so.
 * Contacts ingest ran at the same rate with this cap (100,000 rows, both in turn on a loaded machine).
 */
const DATABASE_THREAD_YOUNG_GENERATION_MB = 6

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

/**
 * Starts PGlite under `dir`, on its own thread, exposed on a Unix socket speaking the PostgreSQL
 * wire protocol, so the product reaches it through the same `@effect/sql-pg` client as a real
 * server: `host` is the socket's directory, as PostgreSQL clients take it. Everything under `dir`
 * is owner-only: the process's umask is set so, as PGlite creates files with whatever it allows.
 */
export const startEmbeddedPostgres = (dir: string) =>
  Effect.gen(function*() {
    yield* Effect.sync(() => process.umask(PRIVATE_UMASK))
    yield* lockDataDir(dir)
    const socketDir = yield* socketDirectory(dir)
    const runtime = yield* Effect.runtime<never>()
    yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: async () => {
          const worker = new Worker(new URL("./pgliteWorker.mjs", import.meta.url), {
            resourceLimits: { maxYoungGenerationSizeMb: DATABASE_THREAD_YOUNG_GENERATION_MB },
            workerData: {
              pgdata: path.join(dir, "pgdata"),
              socketPath: path.join(socketDir, `.s.PGSQL.${SOCKET_PORT}`)
            }
          })
          const reply = await nextReply(worker)
          if (!reply.started) throw new Error(reply.error)
          const running = { worker, stopping: false }
          worker.on(
            "error",
            (error) => Runtime.runSync(runtime)(Effect.logFatal("The embedded database thread failed", error))
          )
          worker.once("exit", (code) => {
            if (running.stopping) return
            // Nothing works without the database: exit as a crash would, for a supervisor to restart.
            Runtime.runSync(runtime)(Effect.logFatal(`The embedded database thread stopped (code ${code}); exiting`))
            process.exit(1)
          })
          return running
        },
        catch: (error) =>
          new EmbeddedPostgresFailed({ message: `The embedded database in ${dir} did not start: ${error}` })
      }),
      (running) =>
        Effect.promise(async () => {
          running.stopping = true
          // Closing lets PGlite write its last pages; a thread that died already has nothing to close.
          const stopped = nextReply(running.worker).catch(() => undefined)
          running.worker.postMessage("stop")
          await stopped
          await running.worker.terminate()
        })
    )
    return { host: socketDir, port: SOCKET_PORT }
  }).pipe(Effect.withSpan("EmbeddedPostgres.start", { attributes: { dir } }))
