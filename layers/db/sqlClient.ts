import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { AppConfig } from "../../services/AppConfig.ts"
import { DatabaseQueue } from "../../services/DatabaseQueue.ts"
import { DatabaseUnreachable, describeDatabaseFailure } from "./connectFailure.ts"
import { startEmbeddedPostgres } from "./embeddedPostgres.ts"
import { PooledConnection } from "./pooledConnection.ts"
import { StatementPreparingClient } from "./statementPreparingClient.ts"

const CONNECT_TIMEOUT_MS = 10_000

const INT8_OID = 20

/**
 * Ids and counters are bigint columns; every value we store fits a JS number exactly. An
 * application giving talkgraph its own PgClient makes it with these `types`.
 */
export const pgTypes = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser
}

/**
 * The client over a pool of ours, with the pool's contention for background work to defer to:
 * statements waiting for a connection, and on the embedded database (one connection, one backend)
 * a statement running on it too.
 */
const clientOf = (pool: pg.Pool, embedded: boolean) =>
  Layer.merge(
    PgClient.layerFromPool({ acquire: Effect.succeed(pool), applicationName: "talkgraph", types: pgTypes }),
    Layer.succeed(DatabaseQueue, {
      contended: Effect.sync(() => pool.waitingCount > 0 || (embedded && pool.totalCount > pool.idleCount))
    })
  )

/**
 * PostgreSQL when `DATABASE_URL` is set, otherwise the embedded PGlite under the data dir. Both
 * pools hand out `PooledConnection`s, so an interrupted request's statement is cancelled on its own
 * connection only, and the connection returns to the pool once idle.
 */
export const SqlClientLive = Layer.unwrapScoped(
  Effect.gen(function*() {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) {
      const url = Redacted.value(config.databaseUrl.value)
      const pool = yield* Effect.acquireRelease(
        Effect.sync(() => {
          const pool = new pg.Pool({
            Client: PooledConnection,
            connectionString: url,
            max: 20,
            connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
            application_name: "talkgraph",
            types: pgTypes
          })
          pool.on("error", () => undefined)
          return pool
        }),
        (pool) => Effect.promise(() => pool.end())
      )
      // As PgClient.layer does: the server must answer before anything starts.
      // pg's own error says refused, unknown host, database or user; the operator reads which.
      yield* Effect.tryPromise({
        try: () => pool.query("SELECT 1"),
        catch: (cause) => new DatabaseUnreachable({ message: describeDatabaseFailure(cause, url) })
      }).pipe(
        Effect.timeoutFail({
          duration: Duration.millis(CONNECT_TIMEOUT_MS),
          onTimeout: () =>
            new DatabaseUnreachable({ message: describeDatabaseFailure(new Error("Connection timed out"), url) })
        })
      )
      return clientOf(pool, false)
    }
    const embedded = yield* startEmbeddedPostgres(config.dataDir)
    const pool = yield* Effect.acquireRelease(
      Effect.sync(() => {
        const pool = new pg.Pool({
          Client: StatementPreparingClient,
          host: embedded.host,
          port: embedded.port,
          database: "postgres",
          user: "postgres",
          // One connection: pglite-socket interleaves extended-protocol messages from concurrent
          // connections on its single backend (electric-sql/pglite#1046), which mismatches bind
          // parameters. PGlite runs one statement at a time anyway, so queuing here costs nothing.
          max: 1,
          application_name: "talkgraph",
          types: pgTypes
        })
        // An idle connection's failure surfaces on its next query; unheard, the pool's event would end the process.
        pool.on("error", () => undefined)
        return pool
      }),
      (pool) => Effect.promise(() => pool.end())
    )
    return clientOf(pool, true)
  })
)
