// Brings dist/ up to date in a source checkout: tsc compiles the TypeScript (`--build` redoes only
// what changed, and nothing when nothing did), then the modules tsc does not emit (the worker
// threads' plain-JavaScript entry points and their hand-written types) are copied beside it.
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const root = fileURLToPath(new URL("..", import.meta.url))
const buildConfig = path.join(root, "tsconfig.build.json")
const SOURCE_DIRS = ["app", "http", "layers", "services", "src"]
const COPIED = [".mjs", ".d.mts"]

/** A packed install has no tsconfig.build.json: it ships dist/ already built. */
export const isSourceCheckout = () => fs.existsSync(buildConfig)

/** Copies through a temporary file: a process starting meanwhile reads the old file or the new, never half. */
const copyIfChanged = (from, to) => {
  const content = fs.readFileSync(from)
  if (fs.existsSync(to) && fs.readFileSync(to).equals(content)) return
  fs.mkdirSync(path.dirname(to), { recursive: true })
  const partial = `${to}.${process.pid}.partial`
  fs.writeFileSync(partial, content)
  fs.renameSync(partial, to)
}

/**
 * Throws (after tsc has printed why) when the sources do not compile. `clean` builds from nothing,
 * so no output of a source since removed is left behind (for the package).
 */
export const buildDist = ({ clean = false } = {}) => {
  if (clean) fs.rmSync(path.join(root, "dist"), { recursive: true, force: true })
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "--build", buildConfig], { stdio: "inherit" })
  for (const dir of SOURCE_DIRS) {
    for (const file of fs.readdirSync(path.join(root, dir), { recursive: true })) {
      if (COPIED.some((extension) => file.endsWith(extension))) {
        copyIfChanged(path.join(root, dir, file), path.join(root, "dist", dir, file))
      }
    }
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    buildDist({ clean: process.argv.includes("--clean") })
  } catch {
    process.exitCode = 1
  }
}
