import { Layer } from "effect"
import { MigrationsLive } from "./db/migrate.ts"
import { SqlClientLive } from "./db/sqlClient.ts"

/** The SQL client with the schema migrated: nothing else starts on an older schema. */
export const DatabaseLive = MigrationsLive.pipe(Layer.provideMerge(SqlClientLive))
