import * as fs from "node:fs"
import * as path from "node:path"
import { fileURLToPath } from "node:url"

const isPackageRoot = (dir: string) => {
  try {
    return JSON.parse(fs.readFileSync(path.join(dir, "package.json"), "utf8")).name === "talkgraph"
  } catch {
    return false
  }
}

let found: string | undefined

/**
 * Where `vite build` put the console: `web/dist` under the package root, found by walking up from
 * this module, so it is the same from the repository (http/) and from compiled JS in an installed
 * package (dist/http/).
 */
export const consoleBuildDir = (): string => {
  if (found) return found
  let dir = path.dirname(fileURLToPath(import.meta.url))
  while (!isPackageRoot(dir) && path.dirname(dir) !== dir) dir = path.dirname(dir)
  found = path.join(dir, "web", "dist")
  return found
}
