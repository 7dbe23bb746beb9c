import { Migrator, SqlClient } from "@effect/sql"
import { Effect, Layer } from "effect"
import { migrations } from "./migrations/mod.ts"

const MIGRATIONS_TABLE = "effect_sql_migrations"
/** Arbitrary constant shared by every talkgraph process: the advisory lock that serializes migrating. */
const MIGRATION_LOCK_KEY = 7_402_193_001

const runMigrations = Migrator.make({})({ loader: Migrator.fromRecord(migrations), table: MIGRATIONS_TABLE })

/**
 * Applies pending migrations. Several processes may start at once against one database: the first
 * takes a transaction-scoped advisory lock and migrates; the others wait, then find nothing to do.
 * The history table is created under the lock too, because the migrator's own create-if-missing
 * races between processes.
 */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  return yield* sql.withTransaction(
    Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK_KEY})`
      yield* sql`
        CREATE TABLE IF NOT EXISTS ${sql(MIGRATIONS_TABLE)} (
          migration_id integer PRIMARY KEY,
          created_at timestamptz NOT NULL DEFAULT now(),
          name text NOT NULL
        )`
      return yield* runMigrations
    })
  )
}).pipe(Effect.withSpan("Database.migrate"))

export const MigrationsLive = Layer.effectDiscard(
  migrate.pipe(
    Effect.tap((applied) =>
      applied.length > 0 ?
        Effect.logInfo(`Applied ${applied.length} migration(s)`).pipe(
          Effect.annotateLogs("migrations", applied.map(([id, name]) => `${id}_${name}`).join(","))
        ) :
        Effect.void
    ),
    Effect.orDie
  )
)
