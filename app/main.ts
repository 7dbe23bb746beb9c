// The command line's entry. It starts the embedded database's thread before it loads the rest of
// itself: loading and evaluating talkgraph's code takes the main thread most of a second, during
// which PGlite starts on a core of its own instead of after it. Only plain Node modules are
// imported here; the database's settings are read as app/config.ts reads them (the layer then
// takes the thread over, or starts one itself where the settings turn out otherwise).
import { startDatabaseThreadAhead } from "../layers/db/databaseThread.ts"

const [command] = process.argv.slice(2)
const needsDatabase = command === "serve" || command === "migrate"
if (needsDatabase && process.env.DATABASE_URL === undefined) {
  startDatabaseThreadAhead(process.env.TALKGRAPH_DATA_DIR ?? ".talkgraph")
}

await import("./commandLine.ts")
