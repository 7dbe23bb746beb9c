// Preloaded into a benchmarked server (NODE_OPTIONS=--import=…): writes the process's own memory
// figures to BENCH_MEMORY_DIR/<pid>.json every second. npm, when it runs the command, loads it too
// and writes its own file; the benchmark reads the server's.
import { writeFileSync } from "node:fs"
import { join } from "node:path"
import { isMainThread } from "node:worker_threads"

const dir = process.env.BENCH_MEMORY_DIR
if (dir && isMainThread) {
  setInterval(() => {
    writeFileSync(join(dir, `${process.pid}.json`), JSON.stringify(process.memoryUsage()))
  }, 1000).unref()
}
