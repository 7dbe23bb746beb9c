import type { SqlClient, SqlError } from "@effect/sql"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Option, Redacted } from "effect"
import pg from "pg"
import { AppConfig } from "../../src/config.ts"
import { DatabaseUnreachable, describeDatabaseFailure } from "./connectFailure.ts"
import { startEmbeddedPostgres } from "./embeddedPostgres.ts"
import { StatementPreparingClient } from "./statementPreparingClient.ts"

const INT8_OID = 20

/** Ids and counters are bigint columns; every value we store fits a JS number exactly. */
const types = {
  getTypeParser: ((oid: number, format?: "text" | "binary") =>
    oid === INT8_OID ? (value: string) => Number(value) : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser
}

type SqlClientLayer = Layer.Layer<PgClient.PgClient | SqlClient.SqlClient, SqlError.SqlError | DatabaseUnreachable>

/** The PostgreSQL at `url`, connected once at start. */
const postgresClient = (url: Redacted.Redacted): SqlClientLayer =>
  PgClient.layer({ url, maxConnections: 20, connectTimeout: Duration.seconds(10), applicationName: "talkgraph", types }).pipe(
    // The client's own error says only "Failed to connect"; its cause says refused, unknown host, database or user.
    Layer.mapError((error) => new DatabaseUnreachable({ message: describeDatabaseFailure(error.cause, Redacted.value(url)) }))
  )

/** PostgreSQL when `DATABASE_URL` is set, otherwise the embedded PGlite under the data dir. */
export const SqlClientLive = Layer.unwrapScoped(
  Effect.gen(function* () {
    const config = yield* AppConfig
    if (Option.isSome(config.databaseUrl)) return postgresClient(config.databaseUrl.value)
    const embedded = yield* startEmbeddedPostgres(config.dataDir)
    const pool = Effect.acquireRelease(
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
          types
        })
        // An idle connection's failure surfaces on its next query; unheard, the pool's event would end the process.
        pool.on("error", () => undefined)
        return pool
      }),
      (pool) => Effect.promise(() => pool.end())
    )
    const embeddedClient: SqlClientLayer = PgClient.layerFromPool({ acquire: pool, applicationName: "talkgraph", types })
    return embeddedClient
  })
)
