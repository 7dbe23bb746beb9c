import { Effect, Runtime, Schema } from "effect"
import { DataDirLocked, SOCKET_PORT, takeDatabaseThread } from "./databaseThread.ts"

export class EmbeddedPostgresFailed extends Schema.TaggedError<EmbeddedPostgresFailed>()("EmbeddedPostgresFailed", {
  message: Schema.String
}) {}

export class DataDirInUse extends Schema.TaggedError<DataDirInUse>()("DataDirInUse", {
  message: Schema.String
}) {}

/**
 * Starts PGlite under `dir` (or takes over the thread the command line started ahead for it), on
 * its own thread, exposed on a Unix socket speaking the PostgreSQL wire protocol, so the product
 * reaches it through the same `@effect/sql-pg` client as a real server: `host` is the socket's
 * directory, as PostgreSQL clients take it. Everything under `dir` is owner-only.
 */
export const startEmbeddedPostgres = (dir: string) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const running = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () => takeDatabaseThread(dir),
        catch: (error) =>
          error instanceof DataDirLocked
            ? new DataDirInUse({
              message: `The embedded database in ${dir} is in use by ${error.message}. ` +
                "Stop it, or set DATABASE_URL to share a PostgreSQL database between processes."
            })
            : new EmbeddedPostgresFailed({ message: `The embedded database in ${dir} did not start: ${error}` })
      }).pipe(Effect.map((thread) => {
        const running = { thread, stopping: false }
        thread.worker.on(
          "error",
          (error) => Runtime.runSync(runtime)(Effect.logFatal("The embedded database thread failed", error))
        )
        thread.worker.once("exit", (code) => {
          if (running.stopping) return
          // Nothing works without the database: exit as a crash would, for a supervisor to restart.
          Runtime.runSync(runtime)(Effect.logFatal(`The embedded database thread stopped (code ${code}); exiting`))
          process.exit(1)
        })
        return running
      })),
      (running) =>
        Effect.promise(() => {
          running.stopping = true
          return running.thread.stop()
        })
    )
    return { host: running.thread.socketDir, port: SOCKET_PORT }
  }).pipe(Effect.withSpan("EmbeddedPostgres.start", { attributes: { dir } }))
