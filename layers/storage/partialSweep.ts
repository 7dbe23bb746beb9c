import * as fsp from "node:fs/promises"
import * as path from "node:path"
import { PARTIAL_SUFFIX } from "./localDisk.ts"

/**
 * Uploads are written to `<target>.<uuid>.part` and renamed into place. A process that died mid-upload
 * leaves its partial file; one not written to for `staleMs` belongs to no upload still under way
 * (the HTTP server gives a request at most five minutes), so it is removed. Answers how many went.
 */
export const sweepPartialUploads = async (root: string, staleMs: number, now: number): Promise<number> => {
  let removed = 0
  const visit = async (dir: string): Promise<void> => {
    const entries = await fsp.readdir(dir, { withFileTypes: true }).catch(() => [])
    for (const entry of entries) {
      const file = path.join(dir, entry.name)
      if (entry.isDirectory()) {
        await visit(file)
      } else if (entry.isFile() && entry.name.endsWith(PARTIAL_SUFFIX)) {
        const stat = await fsp.stat(file).catch(() => undefined)
        if (stat && now - stat.mtimeMs > staleMs) {
          await fsp.rm(file, { force: true })
          removed++
        }
      }
    }
  }
  await visit(root)
  return removed
}
