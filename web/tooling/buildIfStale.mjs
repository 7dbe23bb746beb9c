// Plain JavaScript: `talkgraph serve` in a source checkout runs it in its own process, before the
// server starts, without a TypeScript loader (a tsx process in the start path cost ~50 MB and
// ~0.4 s at every start).
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const web = fileURLToPath(new URL("..", import.meta.url))
const sources = ["index.html", "vite.config.ts", "public", "src"].map((entry) => path.join(web, entry))
const builtIndex = path.join(web, "dist", "index.html")

const newestChange = (entry) => {
  const stat = fs.statSync(entry, { throwIfNoEntry: false })
  if (!stat) return 0
  if (!stat.isDirectory()) return stat.mtimeMs
  // A directory's own time changes when an entry is removed or renamed.
  return Math.max(stat.mtimeMs, ...fs.readdirSync(entry).map((name) => newestChange(path.join(entry, name))))
}

/**
 * Whether web/dist is older than any of the console's sources. An installed package ships the
 * build without its sources, so it is never stale there.
 */
export const consoleBuildIsStale = () => {
  const built = fs.statSync(builtIndex, { throwIfNoEntry: false })?.mtimeMs ?? 0
  return built === 0 || Math.max(...sources.map(newestChange)) > built
}

/** Builds the console when its sources changed since the last build: `npm start` never serves a stale one. */
export const buildConsoleIfStale = () => {
  if (!consoleBuildIsStale()) return
  const vite = path.join(web, "..", "node_modules", "vite", "bin", "vite.js")
  if (!fs.existsSync(vite)) {
    if (fs.existsSync(builtIndex)) return
    throw new Error("The console is not built and vite is not installed: run `npm install` and `npm run build:web`.")
  }
  // A process of its own: a production build whatever NODE_ENV the caller runs with (vitest sets
  // "test", which would bundle React's development build).
  execFileSync(process.execPath, [vite, "build", "--config", path.join(web, "vite.config.ts"), "--logLevel", "warn"], {
    env: { ...process.env, NODE_ENV: "production" },
    stdio: "inherit"
  })
}
