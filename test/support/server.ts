import type { Effect } from "effect"
import * as crypto from "node:crypto"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { inject } from "vitest"
import { postgresUrl } from "./database.ts"
import { startInProcessServer } from "./inProcessServer.ts"
import { createOwnDatabase } from "./ownDatabase.ts"

export interface RunningServer {
  readonly url: string
  readonly dataDir: string
  /** Runs an effect against the server's own services (e.g. its SqlClient), for arranging state. */
  readonly run: <A, E>(effect: Effect.Effect<A, E, any>) => Promise<A>
  readonly close: () => Promise<void>
}

export const TEST_ADMIN = { email: "admin@talkgraph.test", password: "admin-password-123" }

/**
 * Starts the real talkgraph service in this process on a random loopback port, on the suite's
 * database (a fresh copy of the migrated PGlite template, or the PostgreSQL of DATABASE_URL).
 * With `ownDatabase`, PostgreSQL runs get a database of their own (a PGlite copy always is).
 */
export const startServer = async (
  env: Record<string, string> = {},
  options: { readonly ownDatabase?: boolean } = {}
): Promise<RunningServer> => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-test-"))
  const suiteDatabase = postgresUrl()
  const own = suiteDatabase && options.ownDatabase ? await createOwnDatabase(suiteDatabase) : undefined
  const database = own?.url ?? suiteDatabase
  if (!database) await fs.cp(inject("pgliteTemplate"), dataDir, { recursive: true })
  const server = await startInProcessServer({
    TALKGRAPH_DATA_DIR: dataDir,
    TALKGRAPH_SIGNUP: "true",
    TALKGRAPH_ADMIN_EMAIL: TEST_ADMIN.email,
    TALKGRAPH_ADMIN_PASSWORD: TEST_ADMIN.password,
    LOG_LEVEL: "error",
    ...(database ? { DATABASE_URL: database, TALKGRAPH_SECRET_KEY: "test-secret-key-test-secret-key-0123456789" } : {}),
    ...env
  })
  return {
    ...server,
    dataDir,
    close: async () => {
      await server.close()
      await own?.drop()
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  }
}

export const uniqueEmail = (label = "user") => `${label}-${crypto.randomUUID().slice(0, 8)}@example.test`
