import { Effect, Layer } from "effect"
import { ConfigProvider } from "effect"
import * as fs from "node:fs/promises"
import * as os from "node:os"
import * as path from "node:path"
import type { TestProject } from "vitest/node"
import { AppConfigLive } from "../../app/config.ts"
import { DatabaseLive } from "../../layers/database.ts"
import { buildConsoleIfStale } from "../../web/tooling/buildIfStale.mjs"
import { postgresUrl } from "./database.ts"

/** Builds one migrated PGlite data dir for the whole run (initdb costs seconds; a copy does not). */
export default async function setup(project: TestProject) {
  // Once for every test file: the console tests' servers serve web/dist, and two building it at once would collide.
  buildConsoleIfStale()
  const template = await fs.mkdtemp(path.join(os.tmpdir(), "talkgraph-template-"))
  if (!postgresUrl()) {
    const config = ConfigProvider.fromMap(new Map([["TALKGRAPH_DATA_DIR", template]]))
    await Effect.runPromise(
      Effect.scoped(
        Layer.build(DatabaseLive.pipe(Layer.provide(AppConfigLive), Layer.provide(Layer.setConfigProvider(config))))
      )
    )
  }
  project.provide("pgliteTemplate", template)
  return async () => {
    await fs.rm(template, { recursive: true, force: true })
  }
}
