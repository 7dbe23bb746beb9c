// Brings dist/ up to date in a source checkout: tsc compiles the TypeScript (`--build` redoes only
// what changed, and nothing when nothing did), then the modules tsc does not emit (the worker
// threads' plain-JavaScript entry points and their hand-written types) are copied beside it.
// When no source changed since the last build, tsc is not started at all: loading it to find
// nothing to do took ~0.3 s of every start. Last, the command line is bundled (bundleCommandLine.js).
import { execFileSync } from "node:child_process"
import * as fs from "node:fs"
import { createRequire } from "node:module"
import * as path from "node:path"
import { fileURLToPath } from "node:url"
import { bundleCommandLine } from "./bundleCommandLine.js"

const root = fileURLToPath(new URL("..", import.meta.url))
const buildConfig = path.join(root, "tsconfig.build.json")
/** Written by every successful build: its time is when dist/ last matched the sources. */
const builtStamp = path.join(root, "dist", ".built")
/** Files besides the sources whose change changes the output. */
const BUILD_INPUTS = ["tsconfig.json", "tsconfig.build.json", "package.json", "bin/bundleCommandLine.js"]
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

/** The newest change under the source folders: a file's time, or a folder's when an entry left it. */
const newestSourceChange = () => {
  let newest = Math.max(...BUILD_INPUTS.map((file) => fs.statSync(path.join(root, file)).mtimeMs))
  const visit = (dir) => {
    newest = Math.max(newest, fs.statSync(dir).mtimeMs)
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      const at = path.join(dir, entry.name)
      if (entry.isDirectory()) visit(at)
      else newest = Math.max(newest, fs.statSync(at).mtimeMs)
    }
  }
  for (const dir of SOURCE_DIRS) visit(path.join(root, dir))
  return newest
}

/** Whether dist/ was built after the last change to any source (a stat of each, ~10 ms). */
export const distIsCurrent = () => {
  const built = fs.statSync(builtStamp, { throwIfNoEntry: false })?.mtimeMs
  return built !== undefined && newestSourceChange() < built
}

/**
 * Throws (after tsc or esbuild has printed why) when the sources do not compile. `clean` builds
 * from nothing, so no output of a source since removed is left behind (for the package).
 */
export const buildDist = async ({ clean = false } = {}) => {
  if (clean) fs.rmSync(path.join(root, "dist"), { recursive: true, force: true })
  else if (distIsCurrent()) return
  // Taken before compiling: a source saved while tsc runs is newer than the stamp, so built again next time.
  const startedAt = new Date()
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc")
  execFileSync(process.execPath, [tsc, "--build", buildConfig], { stdio: "inherit" })
  for (const dir of SOURCE_DIRS) {
    for (const file of fs.readdirSync(path.join(root, dir), { recursive: true })) {
      if (COPIED.some((extension) => file.endsWith(extension))) {
        copyIfChanged(path.join(root, dir, file), path.join(root, "dist", dir, file))
      }
    }
  }
  await bundleCommandLine(path.join(root, "dist"))
  fs.writeFileSync(builtStamp, "")
  fs.utimesSync(builtStamp, startedAt, startedAt)
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    await buildDist({ clean: process.argv.includes("--clean") })
  } catch {
    process.exitCode = 1
  }
}
