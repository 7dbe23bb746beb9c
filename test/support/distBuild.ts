import { execFileSync } from "node:child_process"
import * as path from "node:path"

/**
 * Tests start the real `talkgraph` command, which runs dist/ and brings it up to date first. One
 * build before any test starts: test files starting it at once would otherwise all build at once.
 */
export default function setup() {
  execFileSync(process.execPath, [path.resolve(import.meta.dirname, "../../bin/buildDist.js")], { stdio: "inherit" })
}
