import { PGlite } from "@electric-sql/pglite"
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { Effect, Schema } from "effect"
import * as fs from "node:fs/promises"
import * as path from "node:path"

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
        await fs.mkdir(dir, { recursive: true })
        const lockFile = path.join(dir, "talkgraph.pid")
        for (let attempt = 0; attempt < 2; attempt++) {
          try {
            await fs.writeFile(lockFile, String(process.pid), { flag: "wx" })
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

/**
 * Starts PGlite under `dir` and exposes it on a loopback port speaking the PostgreSQL wire
 * protocol, so the product reaches it through the same `@effect/sql-pg` client as a real server.
 */
export const startEmbeddedPostgres = (dir: string) =>
  Effect.gen(function* () {
    yield* lockDataDir(dir)
    const db = yield* Effect.acquireRelease(
      // pg_trgm backs the usage report's number search (migration 0006).
      Effect.promise(() => PGlite.create(path.join(dir, "pgdata"), { extensions: { pg_trgm } })),
      (db) => Effect.promise(() => db.close())
    )
    const server = yield* Effect.acquireRelease(
      Effect.promise(async () => {
        const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 16 })
        await server.start()
        return server
      }),
      (server) => Effect.promise(() => server.stop())
    )
    const port = Number(server.getServerConn().split(":").pop())
    return { host: "127.0.0.1", port }
  }).pipe(Effect.withSpan("EmbeddedPostgres.start", { attributes: { dir } }))
