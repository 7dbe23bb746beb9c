import type { Effect } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import { inject } from "vitest"
import { postgresUrl } from "./database.ts"
import { type InProcessServer, startInProcessServer } from "./inProcessServer.ts"
import { createOwnDatabase } from "./ownDatabase.ts"
import { TEST_ADMIN } from "./server.ts"

/**
 * The real service on a database of its own that outlives the process: `restart` stops it (its
 * fibers, connections and listener) and starts a new one on the same data, as an operator's
 * restart does. Its address changes with each start.
 */
export const startRestartableServer = async (env: Record<string, string> = {}) => {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-restart-"))
  const suite = postgresUrl()
  const own = suite ? await createOwnDatabase(suite) : undefined
  if (!own) await fs.cp(inject("pgliteTemplate"), dataDir, { recursive: true })
  const settings = {
    TALKGRAPH_DATA_DIR: dataDir,
    TALKGRAPH_SIGNUP: "true",
    TALKGRAPH_ADMIN_EMAIL: TEST_ADMIN.email,
    TALKGRAPH_ADMIN_PASSWORD: TEST_ADMIN.password,
    LOG_LEVEL: "error",
    ...(own ? { DATABASE_URL: own.url, TALKGRAPH_SECRET_KEY: "test-secret-key-test-secret-key-0123456789" } : {}),
    ...env
  }
  let current: InProcessServer = await startInProcessServer(settings)
  return {
    url: () => current.url,
    run: <A, E>(effect: Effect.Effect<A, E, any>) => current.run(effect),
    restart: async () => {
      await current.close()
      current = await startInProcessServer(settings)
    },
    close: async () => {
      await current.close()
      await own?.drop()
      await fs.rm(dataDir, { recursive: true, force: true })
    }
  }
}
